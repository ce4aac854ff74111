package config

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
)

// The same conversation (system, user, an assistant turn that calls a tool,
// the tool's answer, a follow-up) in each format that carries messages.
var conversationBatteries = map[string]string{
	"native.toml": `
[[tests]]
id = "follow-up"
tools = [{ type = "function", function = { name = "get_weather" } }]
[[tests.messages]]
role = "system"
content = "You answer about weather."
[[tests.messages]]
role = "user"
content = "Weather in Tokyo?"
[[tests.messages]]
role = "assistant"
tool_calls = [{ id = "call_1", type = "function", function = { name = "get_weather", arguments = '{"city":"Tokyo"}' } }]
[[tests.messages]]
role = "tool"
tool_call_id = "call_1"
content = "Sunny, 22°C"
[[tests.messages]]
role = "user"
content = "And should I take an umbrella?"
`,
	"native.json": `{"tests": [{"id": "follow-up",
  "tools": [{"type": "function", "function": {"name": "get_weather"}}],
  "messages": [
    {"role": "system", "content": "You answer about weather."},
    {"role": "user", "content": "Weather in Tokyo?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Tokyo\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 22°C"},
    {"role": "user", "content": "And should I take an umbrella?"}]}]}`,
	// prompt-prix always has user, and sends messages alone when present.
	"prompt-prix.json": `{"prompts": [{"id": "follow-up", "user": "And should I take an umbrella?",
  "tools": [{"type": "function", "function": {"name": "get_weather"}}],
  "messages": [
    {"role": "system", "content": "You answer about weather."},
    {"role": "user", "content": "Weather in Tokyo?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 22°C"},
    {"role": "user", "content": "And should I take an umbrella?"}]}]}`,
	// The flat shape some tools write is read too.
	"flat.jsonl": `{"id": "follow-up", "user": "And should I take an umbrella?", "tools": [{"type": "function", "function": {"name": "get_weather"}}], "messages": [{"role": "system", "content": "You answer about weather."}, {"role": "user", "content": "Weather in Tokyo?"}, {"role": "assistant", "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Tokyo\"}"}]}, {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 22°C"}, {"role": "user", "content": "And should I take an umbrella?"}]}`,
}

func TestConversationsKeepTheirToolCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range conversationBatteries {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			tests, warnings, err := loadBattery(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings = %q", warnings)
			}
			conv := tests[0].Conversation()
			if len(conv) != 5 {
				t.Fatalf("conversation = %+v, want the five messages alone", conv)
			}
			calls := conv[2].ToolCalls
			if len(calls) != 1 || calls[0].ID != "call_1" || calls[0].Name != "get_weather" || calls[0].Arguments != `{"city":"Tokyo"}` {
				t.Errorf("assistant tool calls = %+v", calls)
			}
			if conv[3].Role != "tool" || conv[3].ToolCallID != "call_1" || conv[4].Content != "And should I take an umbrella?" {
				t.Errorf("conversation = %+v", conv)
			}

			body := sendToServer(t, tests[0])
			msgs := body["messages"].([]any)
			if len(msgs) != 5 {
				t.Fatalf("%d messages on the wire", len(msgs))
			}
			call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
			fn := call["function"].(map[string]any)
			if call["id"] != "call_1" || call["type"] != "function" || fn["name"] != "get_weather" || fn["arguments"] != `{"city":"Tokyo"}` {
				t.Errorf("tool call on the wire = %v", call)
			}
			if tool := msgs[3].(map[string]any); tool["tool_call_id"] != "call_1" || tool["content"] != "Sunny, 22°C" {
				t.Errorf("tool turn on the wire = %v", tool)
			}
		})
	}
}

// sendToServer sends the request every model gets for t (as the runner
// builds it: the test's conversation, tools, tool_choice and
// response_format) through pitwall's client to a server on loopback, and
// returns the body the server received.
func sendToServer(t *testing.T, test Test) map[string]any {
	t.Helper()
	var mu sync.Mutex
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = b
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"model":"m","choices":[{"index":0,"delta":{"content":"Yes."},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	temp, seed := 0.0, 42
	req := chat.Request{Model: "m", Messages: test.Conversation(), Tools: test.Tools, ToolChoice: test.ToolChoice,
		ResponseFormat: test.ResponseFormat, Temperature: &temp, Seed: &seed, MaxTokens: 64}
	c := client.New(client.Config{Name: "s", URL: srv.URL + "/v1"}, nil)
	defer c.CloseIdleConnections()
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var body map[string]any
	if err := json.Unmarshal(got, &body); err != nil {
		t.Fatalf("body %q: %v", got, err)
	}
	return body
}

func TestUserBesideMessagesIsNotedWhenNotSent(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "b.json")
	body := `{"tests": [
  {"id": "same", "user": "hi", "messages": [{"role": "user", "content": "hi"}]},
  {"id": "differs", "user": "bye", "messages": [{"role": "user", "content": "hi"}]}]}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, warnings, err := loadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	if conv := tests[1].Conversation(); len(conv) != 1 || conv[0].Content != "hi" {
		t.Errorf("conversation = %+v, want the messages", conv)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "1× gives both user and messages") || !strings.Contains(warnings[0], "(in differs)") {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestMessageProblemsNameTheirField(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "b.json")
	body := `{"tests": [{"id": "a", "messages": [
  {"role": "user", "content": 5},
  {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}]},
  {"role": "user", "content": "hi", "tool_calls": [{"name": "f"}]}]}]}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadBattery(p)
	wantErr(t, err, p, 2, "tests[0].messages[0].content", "neither text nor a list")
	wantErr(t, err, p, 3, "tests[0].messages[1].tool_calls[0]", "no function name")
	wantErr(t, err, p, 4, "tests[0].messages[2].tool_calls", `a "user" message has tool_calls`)
}
