package gpu

import (
	"errors"
	"fmt"
	"time"
)

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
	TokensPerSec     float64       // completion tokens / (latency - ttft)
}

// ErrorClass says what kind of failure a request met. It is decided once,
// where the error is born, and travels with the error.
type ErrorClass string

const (
	ClassTimeout     ErrorClass = "timeout"
	ClassRateLimit   ErrorClass = "rate_limit"
	ClassUnavailable ErrorClass = "unavailable" // connection refused/reset, 503
	ClassHTTP4xx     ErrorClass = "http_4xx"
	ClassHTTP5xx     ErrorClass = "http_5xx"
	ClassMalformed   ErrorClass = "malformed" // bad JSON, stream cut before [DONE]/finish
	ClassCanceled    ErrorClass = "cancelled" // the caller's context was cancelled (stop)
)

// Transient reports whether a retry may succeed.
func (c ErrorClass) Transient() bool {
	switch c {
	case ClassTimeout, ClassRateLimit, ClassUnavailable, ClassHTTP5xx, ClassMalformed:
		return true
	}
	return false
}

// Error is a classified request failure.
type Error struct {
	Class      ErrorClass
	Server     string
	Model      string
	Status     int           // HTTP status, 0 when none
	Message    string        // what the server or transport said
	RetryAfter time.Duration // from a 429's Retry-After, 0 when absent
	Err        error         // the underlying error, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Server, e.Class)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of err, or "" when err is not a classified error.
func ClassOf(err error) ErrorClass {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ""
}

// ServerConfig is what the fleet needs to know of one server.
type ServerConfig struct {
	Name   string
	URL    string // base URL including /v1
	Kind   string // openai | lmstudio | ollama | llamacpp | vllm | sim ("" = detect)
	Slots  int
	GPUs   []int
	APIKey string // resolved from api_key_env; never logged or stored
	// Models, when set, is the list of models the server offers, and the
	// fleet does not need to ask /v1/models.
	Models []string
}

// ServerState is the fleet panel's view of one server at an instant.
type ServerState struct {
	Name         string
	Kind         string
	URL          string
	Up           bool
	DownReason   string
	Slots        int
	Busy         int
	Queue        int      // jobs waiting that could run here
	Offered      []string // models it serves
	Resident     []string // models loaded now, when known
	Loading      string   // model being loaded, if any
	TokensPerSec float64  // recent decode rate across its slots
	GPUs         []GPUState
	// HeldUntil is set while the server is rate-limited: it answered 429
	// with a Retry-After, and the fleet sends it nothing new before then.
	HeldUntil time.Time
	// VRAMUsedGB and VRAMTotalGB are the server's memory as the fleet knows
	// it (probes, telemetry, the loads it made); 0 when unknown.
	VRAMUsedGB, VRAMTotalGB float64
}

// GPUState is one GPU's telemetry reading; a zero value field means unknown.
type GPUState struct {
	Index       int
	UUID        string
	Name        string
	UtilPct     float64
	MemUsedMiB  float64
	MemTotalMiB float64
	TempC       float64
	PowerW      float64
	At          time.Time
}
