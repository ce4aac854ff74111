package check

import (
	"pitwall/gpu/chat"
	"strings"
	"time"
)

// Check is one deterministic assertion of a battery test. Type is one of
// equals, contains, icontains, regex, starts-with, is-json, json-schema,
// tool-call, no-tool-call, not-refusal, max-latency, or "not-" + any of them.
type Check struct {
	Type   string         `json:"type" toml:"type"`
	Value  string         `json:"value,omitempty" toml:"value"`   // text, pattern, or a duration for max-latency
	Name   string         `json:"name,omitempty" toml:"name"`     // tool-call: the function name
	Args   map[string]any `json:"args,omitempty" toml:"args"`     // tool-call: arguments that must match (a subset)
	Schema any            `json:"schema,omitempty" toml:"schema"` // json-schema
	// Scope says which part of an agent test's trajectory the check reads
	// (see trajectory.go): "" the whole loop, "final" its last model turn,
	// "any-step" each turn on its own. A test of one request has one turn,
	// so scope changes nothing there.
	Scope string `json:"scope,omitempty" toml:"scope"`
}

// Output is what a cell produced, as the checks see it. For an agent test
// it is the whole trajectory: Content the final answer, ToolCalls every
// call of every step in order, Latency the loop's; and Steps the model
// turns one by one (nil for a test of one request).
type Output struct {
	Content   string
	ToolCalls []chat.ToolCall
	Latency   time.Duration
	Steps     []Output
}

// Expect is what the test asked of the model, for semantic validation.
type Expect struct {
	ToolChoice     any // as in the request
	HasTools       bool
	ResponseFormat *chat.ResponseFormat
	// Refusal and Empty say that the test's own checks want a refusal or
	// an empty reply (see Wanting): the validation then does not fail the
	// reply for being one.
	Refusal, Empty bool
}

// Wanting is e with Refusal and Empty set from the test's checks: a check
// that passes only on a refusal (not-not-refusal, promptfoo's is-refusal)
// turns off not-refusal, and one that passes only on an empty reply
// (equals "" read as promptfoo reads it) turns off not-empty. promptfoo
// counts a reply with no text of its own a refusal, so its is-refusal turns
// off not-empty too. Without this a test that wants a refusal could never
// pass: the validation every reply gets would fail the very reply it wants.
func (e Expect) Wanting(checks []Check) Expect {
	for _, c := range checks {
		t := strings.ToLower(strings.TrimSpace(c.Type))
		exact := false
		if mode, _ := c.Args["output"].(string); mode == "promptfoo" {
			exact = true
		}
		switch {
		case t == "not-not-refusal":
			e.Refusal = true
			e.Empty = e.Empty || exact
		case t == "equals" && exact && c.Value == "":
			e.Empty = true
		}
	}
	return e
}
