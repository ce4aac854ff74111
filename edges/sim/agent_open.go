package sim

import (
	"path"
	"regexp"
	"strings"
)

// How a simulated model opens a loop the oracle names no call for (an
// agent test, Answer.Agent, whose checks expect no particular tool: prompt-
// prix's ReAct benchmark): it calls the first tool that looks at things
// rather than changes them (a list or search tool before a read tool), on
// the path or quoted name its task mentions, so that the loop has something
// to work through. Every model opens so; what follows is skill (agent.go).
//
// A listing of "[FILE] path" and "[DIR] path" lines (an MCP filesystem's,
// as prompt-prix's mocks write them) is worked through file by file: each
// file is read by the read tools offered, then moved by the move tools
// into the listed folder whose name its content mentions (animals for a
// text about an animal), else the first folder; tools that create, write
// or delete are left alone, and folders are not files to read.

var (
	lookTools = regexp.MustCompile(`(?i)list|search|find|glob|scan|query|^ls|_ls`)
	readTools = regexp.MustCompile(`(?i)read|get|open|view|cat|fetch|load|show`)
	moveTools = regexp.MustCompile(`(?i)move|rename|^mv|copy`)
	// pathWord is a path in a task: ./dir/, dir/file.txt, /abs/path.
	pathWord = regexp.MustCompile(`(?:\.{1,2}/|/)?[\w.-]+/[\w./-]*|[\w-]+\.[a-z0-9]{1,5}\b`)
	quoted   = regexp.MustCompile("[\"'`]([^\"'`\n]{1,120})[\"'`]")
)

// openingTool is the tool a model opens a loop with: the first that looks
// at things, else the first that reads, else the first offered.
func openingTool(req *chatRequest) *wireTool {
	for _, re := range []*regexp.Regexp{lookTools, readTools} {
		for i := range req.Tools {
			if re.MatchString(req.Tools[i].Function.Name) {
				return &req.Tools[i]
			}
		}
	}
	if len(req.Tools) > 0 {
		return &req.Tools[0]
	}
	return nil
}

// openingCall is the loop's first call: openingTool on what the task names
// (a path, without its trailing slash, or a quoted name), else on ".".
func openingCall(req *chatRequest) (toolCall, bool) {
	t := openingTool(req)
	if t == nil {
		return toolCall{}, false
	}
	task := req.lastUser()
	arg := "."
	if m := pathWord.FindString(task); m != "" {
		arg = strings.TrimRight(strings.TrimRight(m, "/"), ".,;:")
		if arg == "" || arg == "." {
			arg = "."
		}
	} else if m := quoted.FindStringSubmatch(task); m != nil {
		arg = m[1]
	}
	if c, ok := callFor(t, arg); ok {
		return c, true
	}
	return toolCall{name: t.Function.Name, args: marshalArgs(valuesFor(t.Function.Parameters))}, true
}

// fsEntry is one line of a [FILE]/[DIR] listing.
type fsEntry struct {
	path string
	dir  bool
}

// fsListing reads a [FILE]/[DIR] listing; nil when the result is none.
func fsListing(result string) []fsEntry {
	var out []fsEntry
	for _, line := range strings.Split(result, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "[FILE]"):
			out = append(out, fsEntry{path: strings.TrimSpace(strings.TrimPrefix(line, "[FILE]"))})
		case strings.HasPrefix(line, "[DIR]"):
			out = append(out, fsEntry{path: strings.TrimSpace(strings.TrimPrefix(line, "[DIR]")), dir: true})
		}
	}
	return out
}

// nextFileCall is the next call of the work a [FILE]/[DIR] listing gives:
// read each file, then move it into its folder; false when it is done or
// the result is no such listing.
func nextFileCall(req *chatRequest, v loopView, made map[string]bool) (toolCall, string, bool) {
	entries := fsListing(v.results[0])
	if len(entries) == 0 {
		return toolCall{}, "", false
	}
	var dirs []string
	for _, e := range entries {
		if e.dir {
			dirs = append(dirs, e.path)
		}
	}
	var readers, movers []*wireTool
	for _, t := range downstreamTools(req, v.calls[0].name) {
		switch name := t.Function.Name; {
		case moveTools.MatchString(name):
			movers = append(movers, t)
		case readTools.MatchString(name):
			readers = append(readers, t)
		}
	}
	for _, e := range entries {
		if e.dir {
			continue
		}
		file := cleanPath(e.path)
		var calls []toolCall
		for _, t := range readers {
			if c, ok := callFor(t, file); ok {
				calls = append(calls, c)
			}
		}
		if len(dirs) > 0 {
			dest := cleanPath(folderFor(file, contentOf(v, file), dirs)) + "/" + path.Base(file)
			for _, t := range movers {
				if c, ok := moveCall(t, file, dest); ok {
					calls = append(calls, c)
				}
			}
		}
		for _, c := range calls {
			if !made[c.name+"\x00"+canonicalArgs(c.args)] {
				return c, file, true
			}
		}
	}
	return toolCall{}, "", false
}

// cleanPath folds a listing's doubled slashes (./dir//1.txt) as a model
// reading it would, keeping a leading "./".
func cleanPath(p string) string {
	c := path.Clean(p)
	if strings.HasPrefix(p, "./") && !strings.HasPrefix(c, "../") && c != "." {
		c = "./" + c
	}
	return c
}

// contentOf is what a read of file returned in the loop so far.
func contentOf(v loopView, file string) string {
	for i, c := range v.calls {
		if readTools.MatchString(c.name) && strings.Contains(c.args, file) {
			return v.results[i]
		}
	}
	return ""
}

// folderFor is the folder whose name (or its singular) the file's content
// mentions, else the first.
func folderFor(file, content string, dirs []string) string {
	text := strings.ToLower(content)
	for _, d := range dirs {
		name := strings.ToLower(path.Base(cleanPath(d)))
		if name != "" && (strings.Contains(text, name) || strings.Contains(text, strings.TrimSuffix(name, "s"))) {
			return d
		}
	}
	return dirs[0]
}

// moveCall calls a move tool with its first two string parameters (the
// required ones first) as source and destination.
func moveCall(t *wireTool, src, dst string) (toolCall, bool) {
	params := t.Function.Parameters
	props, _ := params["properties"].(map[string]any)
	var names []string
	if req, ok := params["required"].([]any); ok {
		for _, r := range req {
			if n, ok := r.(string); ok {
				names = append(names, n)
			}
		}
	}
	var strs []string
	for _, n := range names {
		if p, _ := props[n].(map[string]any); p["type"] == "string" {
			strs = append(strs, n)
		}
	}
	if len(strs) < 2 {
		return toolCall{}, false
	}
	args := valuesFor(params)
	args[strs[0]], args[strs[1]] = src, dst
	return toolCall{name: t.Function.Name, args: marshalArgs(args)}, true
}

// loopTurn is how many tool results a request carries: 0 outside a loop,
// so that only a loop's later turns salt their calls' ids.
func loopTurn(req *chatRequest) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}
