package judge

import (
	"time"

	"pitwall/gpu"
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
}

// Output is what a cell produced, as the checks see it.
type Output struct {
	Content   string
	ToolCalls []gpu.ToolCall
	Latency   time.Duration
}

// Expect is what the test asked of the model, for semantic validation.
type Expect struct {
	ToolChoice     any // as in the request
	HasTools       bool
	ResponseFormat *gpu.ResponseFormat
}

// CheckResult is the outcome of one check or validation.
type CheckResult struct {
	Name   string `json:"name"` // e.g. "contains \"Paris\"", "not-empty", "tool_choice=required"
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"` // why it failed, in words a user can act on
}

// Verdict is a judged cell's outcome.
type Verdict string

const (
	Pass  Verdict = "pass"
	Fail  Verdict = "fail"
	Warn  Verdict = "warn"  // split samples or jury disagreement
	Error Verdict = "error" // the judge could not be run or parsed
)

// Input is what a judge sees of one cell.
type Input struct {
	System    string
	Prompt    string // the user turn(s), rendered
	Tools     []gpu.Tool
	Candidate string // the candidate's reply text, tool calls rendered after it
	Criteria  string
	Reference string
}

// Sample is one judge vote.
type Sample struct {
	Raw       string  `json:"raw"`
	Reasoning string  `json:"reasoning,omitempty"`
	Pass      bool    `json:"pass"`
	Score     float64 `json:"score"`
	Reason    string  `json:"reason,omitempty"`
	ParseErr  string  `json:"parse_error,omitempty"`
}

// JudgeResult is one judge's vote over k samples.
type JudgeResult struct {
	Judge     string   `json:"judge"`
	Weight    float64  `json:"weight"`
	Samples   []Sample `json:"samples"`
	Score     float64  `json:"score"`     // mean of the parsed samples
	Agreement float64  `json:"agreement"` // share of samples agreeing with the majority
	Verdict   Verdict  `json:"verdict"`
}

// JuryResult aggregates several judges.
type JuryResult struct {
	Judges       []JudgeResult `json:"judges"`
	Score        float64       `json:"score"`
	StdDev       float64       `json:"stddev"` // weighted standard deviation of judges' scores
	Spread       float64       `json:"spread"` // max - min of judges' scores
	Verdict      Verdict       `json:"verdict"`
	Disagreement bool          `json:"disagreement"`
	// Decision is the verdict the aggregation method reaches before
	// disagreement is considered: Verdict is Warn on Disagreement and
	// Decision otherwise (see Aggregate).
	Decision Verdict `json:"decision,omitempty"`
}
