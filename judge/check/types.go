package check

import (
	"pitwall/gpu/chat"
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
}
