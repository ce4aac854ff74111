package sim

import (
	"encoding/json"
	"net/http"
	"pitwall/gpu/simspec"
	"strings"
	"testing"
)

func TestStreamFramesSSEWithRoleFirstUsageAndDone(t *testing.T) {
	for _, backend := range []string{BackendOpenAI, BackendLMStudio, BackendOllama, BackendLlamaCpp, BackendVLLM} {
		t.Run(backend, func(t *testing.T) {
			cfg := instant("m1")
			cfg.Spec.Backend = backend
			s := start(t, cfg)
			c := client(t)
			resp, ev := streamChat(t, c, s, body("m1", "Tell me about rivers.", map[string]any{
				"stream": true, "stream_options": map[string]any{"include_usage": true},
			}))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("Content-Type %q", ct)
			}
			if ev.err != nil || len(ev.bad) > 0 {
				t.Fatalf("stream: err %v, bad lines %q", ev.err, ev.bad)
			}
			if !ev.done || ev.data[len(ev.data)-1] != "[DONE]" {
				t.Fatalf("stream does not end with [DONE]: %q", ev.data)
			}
			a := assemble(t, ev)
			first := a.chunks[0]
			if first.Choices[0].Delta.Role != "assistant" {
				t.Errorf("first chunk is not the role delta: %+v", first)
			}
			contentChunks := 0
			for _, c := range a.chunks {
				if c.Object != "chat.completion.chunk" || c.Model != "m1" || c.ID != first.ID {
					t.Errorf("chunk header: %+v", c)
				}
				if len(c.Choices) == 1 && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
					contentChunks++
				}
			}
			if contentChunks < 2 {
				t.Errorf("content came in %d chunks; want deltas a few tokens at a time", contentChunks)
			}
			last := a.chunks[len(a.chunks)-1]
			if len(last.Choices) != 0 || last.Usage == nil {
				t.Fatalf("last chunk before [DONE] is not the usage chunk: %+v", last)
			}
			fin := a.chunks[len(a.chunks)-2]
			if len(fin.Choices) != 1 || fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" {
				t.Errorf("the chunk before usage does not finish with stop: %+v", fin)
			}
			if got := countTokens(a.content); got != a.usage.CompletionTokens {
				t.Errorf("usage says %d completion tokens, content has %d", a.usage.CompletionTokens, got)
			}
			if a.usage.TotalTokens != a.usage.PromptTokens+a.usage.CompletionTokens || a.usage.PromptTokens == 0 {
				t.Errorf("usage %+v", a.usage)
			}
			if hasTimings := len(last.Timings) > 0; hasTimings != (backend == BackendLlamaCpp) {
				t.Errorf("timings on the last chunk: %v, want only on llamacpp", hasTimings)
			}
		})
	}
}

func TestStreamWithoutIncludeUsageSendsNoUsageChunk(t *testing.T) {
	s := start(t, instant("m1"))
	_, ev := streamChat(t, client(t), s, body("m1", "hello", map[string]any{"stream": true}))
	a := assemble(t, ev)
	if a.usage != nil {
		t.Errorf("usage sent without include_usage: %+v", a.usage)
	}
	if !ev.done || a.finish != "stop" {
		t.Errorf("done %v finish %q", ev.done, a.finish)
	}
}

func TestStreamAndNonStreamGiveTheSameReply(t *testing.T) {
	s := start(t, instant("m1"))
	c := client(t)
	b := complete(t, c, s, body("m1", "Explain tides.", nil))
	_, ev := streamChat(t, c, s, body("m1", "Explain tides.", map[string]any{"stream": true}))
	a := assemble(t, ev)
	if b.Object != "chat.completion" || b.Model != "m1" || b.Choices[0].Message.Role != "assistant" {
		t.Errorf("completion header: %+v", b)
	}
	if b.content() == "" || b.content() != a.content {
		t.Errorf("non-streamed %q, streamed %q", b.content(), a.content)
	}
	if b.Choices[0].FinishReason != "stop" || b.Usage.CompletionTokens != countTokens(b.content()) {
		t.Errorf("finish %q usage %+v", b.Choices[0].FinishReason, b.Usage)
	}
}

func TestMaxTokensCutsTheReplyWithFinishLength(t *testing.T) {
	s := start(t, instant("m1"))
	c := client(t)
	for _, tc := range []struct {
		name  string
		extra map[string]any
	}{
		{"max_tokens", map[string]any{"max_tokens": 5}},
		{"max_completion_tokens", map[string]any{"max_completion_tokens": 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := complete(t, c, s, body("m1", "Write an essay.", tc.extra))
			if b.Choices[0].FinishReason != "length" || b.Usage.CompletionTokens != 5 || countTokens(b.content()) != 5 {
				t.Errorf("finish %q, usage %+v, content %q", b.Choices[0].FinishReason, b.Usage, b.content())
			}
		})
	}
}

func TestToolCallsStreamByIndexAndFinishToolCalls(t *testing.T) {
	cfg := instant("m1")
	cfg.Catalog = map[string]simspec.Model{"m1": {Skill: 1}}
	cfg.Answers = map[string]Answer{"What's the weather in Tokyo?": {
		Category: "tools", ToolName: "get_weather", ToolArgs: map[string]any{"city": "Tokyo", "units": "metric", "days": 3},
	}}
	s := start(t, cfg)
	c := client(t)
	extra := map[string]any{"tools": []any{weatherTool()}, "tool_choice": "required"}
	const wantArgs = `{"city":"Tokyo","days":3,"units":"metric"}`

	b := complete(t, c, s, body("m1", "What's the weather in Tokyo?", extra))
	if b.Choices[0].FinishReason != "tool_calls" || len(b.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("reply: %+v", b)
	}
	tc := b.Choices[0].Message.ToolCalls[0]
	if tc.Type != "function" || tc.ID == "" || tc.Function.Name != "get_weather" || tc.Function.Arguments != wantArgs {
		t.Errorf("tool call %+v", tc)
	}
	if b.Choices[0].Message.Content != nil {
		t.Errorf("content %q beside a tool call, want null", *b.Choices[0].Message.Content)
	}

	extra["stream"] = true
	_, ev := streamChat(t, c, s, body("m1", "What's the weather in Tokyo?", extra))
	a := assemble(t, ev)
	call := a.calls[0]
	if a.finish != "tool_calls" || len(a.calls) != 1 || call.name != "get_weather" || call.args != wantArgs || call.id != tc.ID {
		t.Errorf("streamed call %+v, finish %q", call, a.finish)
	}
	argChunks := 0
	for _, c := range a.chunks {
		if len(c.Choices) == 1 && len(c.Choices[0].Delta.ToolCalls) == 1 && c.Choices[0].Delta.ToolCalls[0].Function.Name == "" {
			argChunks++
		}
	}
	if argChunks < 2 {
		t.Errorf("arguments came in %d chunks after the name, want several", argChunks)
	}
}

func TestBadRequestsGetOpenAIErrorBodies(t *testing.T) {
	s := start(t, instant("m1"))
	c := client(t)
	for _, tc := range []struct {
		name string
		body string
	}{
		{"not JSON", `{"model": "m1", "messages": [`},
		{"no messages", `{"model": "m1", "messages": []}`},
		{"no model", `{"messages": [{"role":"user","content":"hi"}]}`},
		{"content of the wrong type", `{"model": "m1", "messages": [{"role":"user","content":7}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, out := post(t, c, s, []byte(tc.body))
			if status != http.StatusBadRequest {
				t.Fatalf("status %d: %s", status, out)
			}
			if e := decodeError(t, out); e.Error.Type != "invalid_request_error" {
				t.Errorf("type %q", e.Error.Type)
			}
		})
	}
}

func TestContentPartsAreReadAsText(t *testing.T) {
	cfg := instant("m1")
	cfg.Catalog = map[string]simspec.Model{"m1": {Skill: 1}}
	cfg.Answers = map[string]Answer{"What is 2+2?": {Content: "4", Exact: true}}
	s := start(t, cfg)
	req := map[string]any{"model": "m1", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "What is "}, map[string]any{"type": "text", "text": "2+2?"},
	}}}}
	b, _ := json.Marshal(req)
	if got := complete(t, client(t), s, b).content(); got != "4" {
		t.Errorf("content %q, want the oracle's exact answer", got)
	}
}

func weatherTool() map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{
		"name": "get_weather",
		"parameters": map[string]any{"type": "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []any{"city"}},
	}}
}
