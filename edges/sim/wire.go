package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The simulator's own copy of the OpenAI chat wire format: it must not
// import pitwall/gpu, and it decodes what any client may send (content as a
// string or as parts, max_tokens or max_completion_tokens).

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	N                   *int            `json:"n"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	Seed                *int64          `json:"seed"`
	Tools               []wireTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      *responseFormat `json:"response_format"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *jsonSchemaSpec `json:"json_schema"`
}

type jsonSchemaSpec struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	text       string          // Content decoded
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireCallFunc `json:"function"`
}

type wireCallFunc struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// maxBody bounds a request body; real servers refuse far larger prompts by
// context length long before this.
const maxBody = 32 << 20

// decodeChat reads and checks a chat completion request.
func decodeChat(r io.Reader) (*chatRequest, error) {
	var req chatRequest
	dec := json.NewDecoder(io.LimitReader(r, maxBody))
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("invalid JSON body: %w", err)
	}
	if req.Model == "" {
		return nil, errors.New("'model' is required")
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("'messages' must be a non-empty array")
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		t, err := contentText(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		m.text = t
	}
	return &req, nil
}

// contentText flattens a message's content: a string, null, or an array of
// parts whose text parts are joined.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// maxTokens is the request's completion budget, 0 when unbounded; a
// server that does not read max_completion_tokens (Ollama) sees only
// max_tokens.
func (r *chatRequest) maxTokens(readsMaxCompletion bool) int {
	switch {
	case readsMaxCompletion && r.MaxCompletionTokens != nil && *r.MaxCompletionTokens > 0:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil && *r.MaxTokens > 0:
		return *r.MaxTokens
	}
	return 0
}

// toolChoice returns "auto", "none", "required", or "function" with the
// named function.
func (r *chatRequest) toolChoice() (mode, fn string) {
	if len(r.ToolChoice) == 0 || string(r.ToolChoice) == "null" {
		return "auto", ""
	}
	var s string
	if json.Unmarshal(r.ToolChoice, &s) == nil {
		return s, ""
	}
	var obj struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(r.ToolChoice, &obj) == nil && obj.Function.Name != "" {
		return "function", obj.Function.Name
	}
	return "auto", ""
}

// wantsJSON reports whether response_format asks for a JSON object.
func (r *chatRequest) wantsJSON() bool {
	return r.ResponseFormat != nil && (r.ResponseFormat.Type == "json_object" || r.ResponseFormat.Type == "json_schema")
}

// lastUser is the content of the last user message.
func (r *chatRequest) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].text
		}
	}
	return ""
}

// Replies.

type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	ServiceTier       string        `json:"service_tier,omitempty"`
	SystemFingerprint any           `json:"system_fingerprint"` // a string, or nil for null
	Choices           []chunkChoice `json:"choices"`
	Usage             any           `json:"usage,omitempty"` // *usage, jsonNull, or nil for none
	Timings           *timings      `json:"timings,omitempty"`
}

// jsonNull marshals as null where a nil interface would be left out.
var jsonNull = json.RawMessage("null")

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type delta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	Refusal   any            `json:"refusal,omitempty"` // jsonNull on OpenAI's first chunk
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	ServiceTier       string             `json:"service_tier,omitempty"`
	SystemFingerprint any                `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             usage              `json:"usage"`
	Timings           *timings           `json:"timings,omitempty"`
}

type completionChoice struct {
	Index        int        `json:"index"`
	Message      outMessage `json:"message"`
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason string     `json:"finish_reason"`
}

type outMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   any            `json:"refusal,omitempty"` // jsonNull on OpenAI
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// timings is llama.cpp's non-standard speed report on its last chunk.
type timings struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelItem `json:"data"`
}

type modelItem struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	OwnedBy string       `json:"owned_by"`
	Status  *modelStatus `json:"status,omitempty"` // llama.cpp router
}

type modelStatus struct {
	Value string `json:"value"`
}
