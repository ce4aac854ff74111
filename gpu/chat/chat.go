package chat

import "time"

// Message is one chat message, in the OpenAI shape.
type Message struct {
	Role       string     `json:"role" toml:"role"`
	Content    string     `json:"content" toml:"content"`
	Name       string     `json:"name,omitempty" toml:"name"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty" toml:"tool_calls"`
	ToolCallID string     `json:"tool_call_id,omitempty" toml:"tool_call_id"`
}

// Tool is an OpenAI tool definition ({"type":"function","function":{...}}).
type Tool struct {
	Type     string      `json:"type" toml:"type"`
	Function FunctionDef `json:"function" toml:"function"`
}

// FunctionDef describes a callable function; Parameters is a JSON Schema
// object (decoded from JSON or TOML into plain maps).
type FunctionDef struct {
	Name        string `json:"name" toml:"name"`
	Description string `json:"description,omitempty" toml:"description"`
	Parameters  any    `json:"parameters,omitempty" toml:"parameters"`
}

// ToolCall is a function call the model made. Arguments is the raw JSON text
// the model produced (it may not be valid JSON: that is for checks to judge).
type ToolCall struct {
	ID        string `json:"id,omitempty" toml:"id"`
	Name      string `json:"name" toml:"name"`
	Arguments string `json:"arguments" toml:"arguments"`
}

// ResponseFormat asks for JSON output: Type is "text", "json_object" or
// "json_schema" (with Schema).
type ResponseFormat struct {
	Type   string `json:"type" toml:"type"`
	Name   string `json:"name,omitempty" toml:"name"`
	Schema any    `json:"schema,omitempty" toml:"schema"`
	Strict bool   `json:"strict,omitempty" toml:"strict"`
}

// Request is one chat completion to run on some server of the fleet.
type Request struct {
	Model          string
	Messages       []Message
	Tools          []Tool
	ToolChoice     any // nil, "auto", "none", "required", or {"type":"function","function":{"name":...}}
	ResponseFormat *ResponseFormat
	// Temperature is sent whenever it is non-nil, zero included (go-openai
	// alone would drop 0 because its field is omitempty).
	Temperature *float64
	Seed        *int
	MaxTokens   int
}

// The Server of a Result no server answered: its answer was taken from an
// earlier request with the same key in the ledger (ServerCache), or from
// an identical request in flight at the same time (ServerShared).
const (
	ServerCache  = "(cache)"
	ServerShared = "(shared)"
)

// Result is what a server answered and how fast.
type Result struct {
	Server           string
	Model            string // the model the server says answered
	Content          string
	Reasoning        string // reasoning_content, when the server sends it apart
	ToolCalls        []ToolCall
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	TTFT             time.Duration // dispatch to first content or tool-call token
	Latency          time.Duration // dispatch to end of stream
	TokensPerSec     float64       // decode tokens/s; 0 where no decode was measured
	// PromptCut is the model's context length when the prompt filled it:
	// the server cut the prompt to fit (Ollama does so silently), so the
	// model never saw all of it. 0 when not cut, or not known.
	PromptCut int
	// RateLimit is what a hosted API's headers said of its limits with the
	// reply; nil when they said nothing.
	RateLimit *RateLimit
}

// RateLimit is a hosted API's account of its rate limits, read from a
// reply's headers (OpenAI's and Azure's x-ratelimit-*, Anthropic's
// anthropic-ratelimit-*): what is left of each budget, and how long until
// each is whole again, counted from when the reply arrived.
type RateLimit struct {
	Requests, Tokens           int           // remaining; -1 when not said
	RequestsReset, TokensReset time.Duration // 0 when not said
}

// Purpose says why a request is made; the scheduler treats them differently
// (judge work never delays inference work).
type Purpose string

const (
	PurposeInference Purpose = "inference"
	PurposeJudge     Purpose = "judge"
	PurposeWarmup    Purpose = "warmup"
	PurposeProbe     Purpose = "probe"
)

// Kind is a server's dialect of the OpenAI API: which state endpoints it
// has, whether it loads models on demand, how it names them.
type Kind string

const (
	KindOpenAI   Kind = "openai" // a hosted API or anything else OpenAI-compatible
	KindLMStudio Kind = "lmstudio"
	KindOllama   Kind = "ollama"
	KindLlamaCpp Kind = "llamacpp"
	KindVLLM     Kind = "vllm"
	KindSim      Kind = "sim" // pitwall's own simulator (edges/sim)
)

// Kinds is every kind a config may name, in the order help text lists them.
func Kinds() []Kind {
	return []Kind{KindOpenAI, KindLMStudio, KindOllama, KindLlamaCpp, KindVLLM, KindSim}
}

// JIT reports whether a server of this kind loads a model when a request
// names it (so placement must mind what is resident); vLLM and hosted APIs
// serve every offered model at all times.
func (k Kind) JIT() bool {
	switch k {
	case KindLMStudio, KindOllama, KindLlamaCpp, KindSim:
		return true
	}
	return false
}
