package importrun

import (
	"encoding/json"
	"regexp"
	"strings"

	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
)

// Markers of a tool call written into a reply's text.
const (
	ppMarker     = "**tool call:**" // prompt-prix's rendering, compared ignoring case
	lfmStart     = "<|tool_call_start|>"
	lfmEnd       = "<|tool_call_end|>"
	hermesStart  = "<tool_call>"
	hermesEnd    = "</tool_call>"
	fnCallStart  = "<function_call>"
	fnCallEnd    = "</function_call>"
	ppSentinel   = "__TOOL_CALLS__:" // prompt-prix's marker of the calls a response carries, before their JSON
	maxNameBytes = 256               // a function name longer than this is not one
)

// ToolCallsInText takes the tool calls that a reply carries in its text
// out of it, and returns the text left and the calls, in the order they
// were written:
//
//  1. prompt-prix's rendering of the calls a server returned: a line
//     **Tool Call:** `name` followed by fenced blocks holding the
//     arguments. Older prompt-prix versions wrote one fenced block per
//     streamed fragment of the arguments, so consecutive blocks are joined
//     into one arguments text; a call with no block has no arguments.
//  2. LiquidAI's raw tokens, <|tool_call_start|>[fn(k="v"), …]<|tool_call_end|>,
//     Python calls (parsePyCalls) or a JSON list of {"name", "arguments"}.
//  3. Hermes' <tool_call>{"name", "arguments"}</tool_call> (and
//     <function_call>…</function_call>).
//  4. prompt-prix's sentinel __TOOL_CALLS__: and a JSON list of calls
//     (OpenAI's {"id", "type", "function": {"name", "arguments"}} or
//     {"name", "arguments"}), which it writes into a response that called
//     tools; left in the text, a check such as contains "4" would read the
//     arguments as if the model had written them.
//
// A marker whose call cannot be read is left in the text, so the checks and
// the judge see it; a raw call whose name can be read but whose arguments
// cannot becomes a call with the arguments as written (the tool-args-json
// validation then says they are not JSON). A call cut off by the end of the
// reply is read as far as it goes.
func ToolCallsInText(s string) (text string, calls []chat.ToolCall) {
	var keep strings.Builder
	i := 0
	for i < len(s) {
		at, kind := nextMarker(s, i)
		if at < 0 {
			break
		}
		end, found := 0, []chat.ToolCall(nil)
		switch kind {
		case ppMarker:
			end, found = readRendered(s, at)
		case lfmStart:
			end, found = readTokens(s, at, lfmStart, lfmEnd, readLFM)
		case hermesStart:
			end, found = readTokens(s, at, hermesStart, hermesEnd, readHermes)
		case fnCallStart:
			end, found = readTokens(s, at, fnCallStart, fnCallEnd, readHermes)
		case ppSentinel:
			end, found = readSentinel(s, at)
		}
		if len(found) == 0 {
			keep.WriteString(s[i : at+len(kind)])
			i = at + len(kind)
			continue
		}
		keep.WriteString(s[i:at])
		calls = append(calls, found...)
		i = end
	}
	keep.WriteString(s[i:])
	if len(calls) == 0 {
		return s, nil
	}
	return tidy(keep.String()), calls
}

// nextMarker finds the first marker at or after i.
func nextMarker(s string, i int) (int, string) {
	best, kind := -1, ""
	for _, m := range []string{ppMarker, lfmStart, hermesStart, fnCallStart, ppSentinel} {
		k := strings.Index(s[i:], m)
		if m == ppMarker {
			k = indexFold(s[i:], m) // "**Tool Call:**" in any case
		}
		if k >= 0 && (best < 0 || i+k < best) {
			best, kind = i+k, m
		}
	}
	return best, kind
}

// readSentinel reads the JSON value after prompt-prix's __TOOL_CALLS__:
// as calls; end is where the value ends.
func readSentinel(s string, at int) (end int, calls []chat.ToolCall) {
	j := at + len(ppSentinel)
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	dec := json.NewDecoder(strings.NewReader(s[j:]))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return 0, nil
	}
	return j + int(dec.InputOffset()), jsonCalls(string(raw))
}

// indexFold is strings.Index ignoring the ASCII case of the bytes of
// marker, which starts with a byte that has no case.
func indexFold(s, marker string) int {
	for i := 0; i+len(marker) <= len(s); {
		k := strings.IndexByte(s[i:], marker[0])
		if k < 0 || i+k+len(marker) > len(s) {
			return -1
		}
		if textutil.HasPrefixFold(s[i+k:], marker) {
			return i + k
		}
		i += k + 1
	}
	return -1
}

// readRendered reads prompt-prix's **Tool Call:** `name` and the fenced
// blocks after it; end is where the call's text ends.
func readRendered(s string, at int) (end int, calls []chat.ToolCall) {
	i := at + len(ppMarker)
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= len(s) || s[i] != '`' {
		return 0, nil
	}
	close := strings.IndexByte(s[i+1:], '`')
	if close <= 0 || close > maxNameBytes || strings.ContainsAny(s[i+1:i+1+close], "\n\r") {
		return 0, nil
	}
	name := strings.TrimSpace(s[i+1 : i+1+close])
	if name == "" {
		return 0, nil
	}
	end = i + 1 + close + 1
	var args strings.Builder
	for {
		j := end
		for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
			j++
		}
		if !strings.HasPrefix(s[j:], "```") {
			break
		}
		nl := strings.IndexByte(s[j:], '\n')
		if nl < 0 {
			break // a fence and nothing after it
		}
		body := j + nl + 1
		stop := strings.Index(s[body:], "\n```")
		if stop < 0 {
			args.WriteString(s[body:]) // cut off by the end of the reply
			end = len(s)
			break
		}
		args.WriteString(s[body : body+stop])
		end = body + stop + len("\n```")
	}
	return end, []chat.ToolCall{{Name: name, Arguments: strings.TrimSpace(args.String())}}
}

// readTokens reads a call between start and stop markers with read; a
// missing stop marker takes the rest of the reply.
func readTokens(s string, at int, start, stop string, read func(string) []chat.ToolCall) (int, []chat.ToolCall) {
	body := at + len(start)
	end := len(s)
	inner := s[body:]
	if k := strings.Index(inner, stop); k >= 0 {
		inner = inner[:k]
		end = body + k + len(stop)
	}
	return end, read(strings.TrimSpace(inner))
}

// pyName is the function name a Python call starts with.
var pyName = regexp.MustCompile(`^\[?\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\(`)

// readLFM reads LiquidAI's calls: Python calls, or JSON.
func readLFM(inner string) []chat.ToolCall {
	if strings.HasPrefix(inner, "{") || strings.HasPrefix(inner, "[{") {
		if calls := jsonCalls(inner); len(calls) > 0 {
			return calls
		}
	}
	if calls, err := parsePyCalls(inner); err == nil {
		return calls
	}
	m := pyName.FindStringSubmatchIndex(inner)
	if m == nil || m[3]-m[2] > maxNameBytes {
		return nil
	}
	args := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(inner[m[1]:]), "]"))
	args = strings.TrimSuffix(args, ")")
	return []chat.ToolCall{{Name: inner[m[2]:m[3]], Arguments: args}}
}

// readHermes reads {"name", "arguments"} (or a list of them).
func readHermes(inner string) []chat.ToolCall { return jsonCalls(inner) }

// jsonCalls reads one call object or a list of them: {"name": …,
// "arguments": {…} or "…"}, with "parameters" or "args" for arguments and
// OpenAI's {"function": {"name", "arguments"}} nesting.
func jsonCalls(text string) []chat.ToolCall {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var out []chat.ToolCall
	for _, e := range list {
		c, ok := callObject(e)
		if !ok {
			return nil
		}
		out = append(out, c)
	}
	return out
}

// callObject reads one call in any of the JSON shapes the tools write.
func callObject(v any) (chat.ToolCall, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return chat.ToolCall{}, false
	}
	id, _ := m["id"].(string)
	if fn, ok := m["function"].(map[string]any); ok {
		m = fn
	}
	name, _ := m["name"].(string)
	if name == "" {
		name, _ = m["function"].(string) // inspect names the function so
	}
	if name == "" || len(name) > maxNameBytes {
		return chat.ToolCall{}, false
	}
	var args any
	for _, k := range []string{"arguments", "parameters", "args", "input"} {
		if a, ok := m[k]; ok {
			args = a
			break
		}
	}
	text := ""
	switch a := args.(type) {
	case nil:
	case string:
		text = a
	default:
		text = textutil.JSON(a)
	}
	return chat.ToolCall{ID: id, Name: name, Arguments: text}, true
}

// tidy trims the text left around removed calls.
func tidy(s string) string {
	s = strings.TrimSpace(s)
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return s
}
