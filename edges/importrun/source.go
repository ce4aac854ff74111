package importrun

import (
	"fmt"
	"strings"
	"time"

	"pitwall/gpu/chat"
)

// Source is a finished run as another tool recorded it, before it is
// joined to a battery.
type Source struct {
	Format string   // the kind of file, in words: "prompt-prix results export", …
	Models []string // column order, ids cleaned (CleanModelID)
	Tests  []string // test ids, in the file's order
	Repeat int      // answers per (model, test): 1, or a consistency run's count
	// Results holds what the file answered, at most one per (model, test,
	// repeat); a cell with none was not finished in the other tool.
	Results []Result
	// Refs, when set, says how each of Tests is found in the battery
	// (Tests[i] is then only what messages call it); without it, Tests
	// are the battery's ids.
	Refs []TestRef
	// RanAt is when the file says the run happened; zero when it does not say.
	RanAt time.Time
	// Notes say what the reader read differently from the file's own
	// meaning, or left out, once per kind.
	Notes []string
}

// TestRef finds a test of the file in the battery: by ID when the battery
// has it, else by place (Pos, 0-based; -1 for none). Hint is an id the
// file gives the test at Pos, which the battery's must agree with.
type TestRef struct {
	ID   string
	Pos  int
	Hint string
}

// Outcome is what became of one request in the other tool.
type Outcome int

const (
	// Answered: the model replied. pitwall checks the reply again.
	Answered Outcome = iota
	// Errored: no usable reply (server, transport, timeout): a ⚠️ cell.
	Errored
	// Unfinished: the run ended before this request did (stopped, still
	// pending when the file was written): a ⊘ cell.
	Unfinished
)

// Result is one answer of the file.
type Result struct {
	Model   string
	Test    string
	Repeat  int // 0-based
	Outcome Outcome
	// Output is the reply's text. Tool calls written into it are taken out
	// by Import (ToolCallsInText) unless ToolCalls is set.
	Output string
	// ToolCalls are the reply's calls when the file keeps them apart from
	// the text; nil means "look for them in Output".
	ToolCalls        []chat.ToolCall
	Latency          time.Duration
	PromptTokens     int
	CompletionTokens int
	Error            string // why it errored, as the file says
	// Verdict is the other tool's own verdict on the reply: "pass", "fail"
	// or "" when it gave none; Why is its reason for a fail.
	Verdict, Why string
}

// Verdicts the readers put in Result.Verdict.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
)

// notes gathers a reader's notes, once per kind with a count.
type notes struct {
	order []string
	count map[string]int
}

func (n *notes) add(kind string) {
	if n.count == nil {
		n.count = map[string]int{}
	}
	if n.count[kind] == 0 {
		n.order = append(n.order, kind)
	}
	n.count[kind]++
}

func (n *notes) list() []string {
	out := make([]string, 0, len(n.order))
	for _, k := range n.order {
		if c := n.count[k]; c > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", k, c))
		} else {
			out = append(out, k)
		}
	}
	return out
}

// CleanModelID drops a prompt-prix server prefix: "1: gemma-3-27b-it"
// and "1:gemma-3-27b-it" (route to server 1) are the model
// "gemma-3-27b-it". A prefix is digits before the first colon, as
// prompt-prix's own parser reads it; anything else is kept as written.
func CleanModelID(id string) string {
	head, rest, ok := strings.Cut(id, ":")
	if !ok || head == "" || strings.Trim(head, "0123456789") != "" {
		return strings.TrimSpace(id)
	}
	if rest = strings.TrimSpace(rest); rest == "" {
		return strings.TrimSpace(id)
	}
	return rest
}

// cleanModels cleans every id, keeping two ids that would clean to the
// same name (one model pinned to two servers) as written, so their
// columns stay apart. It returns the cleaned ids by original.
func cleanModels(ids []string, n *notes) map[string]string {
	clean := make(map[string]string, len(ids))
	owners := map[string][]string{}
	for _, id := range ids {
		c := CleanModelID(id)
		clean[id] = c
		owners[c] = append(owners[c], id)
	}
	for _, id := range ids {
		if c := clean[id]; len(owners[c]) > 1 && c != id {
			clean[id] = strings.TrimSpace(id)
			n.add(fmt.Sprintf("model %q runs on several servers in the file: its columns keep their server prefixes", c))
		}
	}
	return clean
}
