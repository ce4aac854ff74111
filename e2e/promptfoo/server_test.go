package promptfoo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// reply is one fixed output the server gives: text, tool calls, or both.
type reply struct {
	content string
	calls   []call
}

type call struct{ name, args string }

// fixedServer is an OpenAI-compatible chat server that answers each prompt
// with the reply keyed by it (the last user message, trimmed), streamed or
// not as the client asks. An unknown prompt is a 400, so that a case whose
// prompt does not arrive as written fails loudly.
type fixedServer struct {
	*httptest.Server
	replies map[string]reply
	mu      sync.Mutex
	unknown []string
}

func newFixedServer(t *testing.T, replies map[string]reply) *fixedServer {
	s := &fixedServer{replies: replies}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"fixed","object":"model","owned_by":"suite"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", s.chat)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *fixedServer) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	prompt := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			prompt, _ = m.Content.(string)
		}
	}
	rep, ok := s.replies[strings.TrimSpace(prompt)]
	if !ok {
		s.mu.Lock()
		s.unknown = append(s.unknown, prompt)
		s.mu.Unlock()
		http.Error(w, `{"error":{"message":"unknown prompt"}}`, http.StatusBadRequest)
		return
	}
	finish := "stop"
	var calls []map[string]any
	for i, c := range rep.calls {
		calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i+1), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": c.args}})
	}
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	msg := map[string]any{"role": "assistant", "content": rep.content}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
		if rep.content == "" {
			msg["content"] = nil
		}
	}
	usage := map[string]any{"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-fixed", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fixed", "object": "chat.completion.chunk", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := map[string]any{"role": "assistant", "content": rep.content}
	if len(calls) > 0 {
		delta["tool_calls"] = calls
	}
	chunk(delta, nil, nil)
	chunk(map[string]any{}, finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
