package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"pitwall/gpu/chat"
)

// The maps requestParams and inferenceKey rendered before they became
// structs: the keys of answers in ledgers written then must not change.
func paramsAsMap(req chat.Request) string {
	return mustJSON(map[string]any{
		"temperature": req.Temperature, "seed": req.Seed, "max_tokens": req.MaxTokens,
		"tools": req.Tools, "tool_choice": req.ToolChoice, "response_format": req.ResponseFormat,
	})
}

func keyAsMap(req chat.Request) string {
	if req.Temperature == nil || *req.Temperature != 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(mustJSON(map[string]any{
		"v": "pitwall-inference-v1", "model": req.Model, "messages": req.Messages, "tools": req.Tools,
		"tool_choice": req.ToolChoice, "response_format": req.ResponseFormat, "temperature": 0,
		"seed": req.Seed, "max_tokens": req.MaxTokens,
	})))
	return hex.EncodeToString(sum[:])
}

func TestRequestJSONIsTheMapsBytes(t *testing.T) {
	t.Parallel()
	zero, warm, seed := 0.0, 0.7, 42
	tools := []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "get_weather", Description: "<city> & \"unit\""}}}
	reqs := []chat.Request{
		{Model: "m", Messages: []chat.Message{{Role: "user", Content: "hi <b>&</b>"}}, Temperature: &zero},
		{Model: "qwen3:0.6b", Messages: []chat.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u\nv"},
			{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}},
			{Role: "tool", ToolCallID: "call_1", Content: "r"}},
			Tools: tools, ToolChoice: "required", Temperature: &zero, Seed: &seed, MaxTokens: 512,
			ResponseFormat: &chat.ResponseFormat{Type: "json_schema", Name: "x", Schema: map[string]any{"type": "object"}, Strict: true}},
		{Model: "m", Tools: tools, ToolChoice: map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}},
			Temperature: &zero},
		{Model: "m", Temperature: &warm, Seed: &seed},
		{Model: "m"},
	}
	for i, req := range reqs {
		if got, want := requestParams(req), paramsAsMap(req); got != want {
			t.Errorf("request %d params:\n got %s\nwant %s", i, got, want)
		}
		if got, want := inferenceKey(req), keyAsMap(req); got != want {
			t.Errorf("request %d key: got %q, want %q", i, got, want)
		}
	}
	if inferenceKey(reqs[0]) == "" || inferenceKey(reqs[3]) != "" {
		t.Error("a key only at temperature 0")
	}
}
