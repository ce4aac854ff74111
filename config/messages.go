package config

import (
	"encoding/json"
	"fmt"
	"strings"

	"pitwall/gpu/chat"
)

// RawMessage is a chat message as batteries write it: OpenAI's shape, with
// content a string, null (an assistant turn that only calls tools) or a
// list of parts.
type RawMessage struct {
	Role       string        `toml:"role" json:"role"`
	Content    any           `toml:"content" json:"content"`
	Name       string        `toml:"name" json:"name"`
	ToolCalls  []rawToolCall `toml:"tool_calls" json:"tool_calls"`
	ToolCallID string        `toml:"tool_call_id" json:"tool_call_id"`
}

// rawToolCall is a call in an assistant turn: OpenAI's
// {"id", "type": "function", "function": {"name", "arguments"}}, or the
// flat {"id", "name", "arguments"}. Arguments are JSON text, or an object
// written inline (sent as its JSON text).
type rawToolCall struct {
	ID        string           `toml:"id" json:"id"`
	Type      string           `toml:"type" json:"type"`
	Name      string           `toml:"name" json:"name"`
	Arguments any              `toml:"arguments" json:"arguments"`
	Function  *rawFunctionCall `toml:"function" json:"function"`
}

type rawFunctionCall struct {
	Name      string `toml:"name" json:"name"`
	Arguments any    `toml:"arguments" json:"arguments"`
}

// UnmarshalJSON also reads inspect's call, whose "function" is the name
// itself ({"id", "function": "get_weather", "arguments": {...}}).
func (f *rawFunctionCall) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		f.Name = name
		return nil
	}
	type plain rawFunctionCall
	return json.Unmarshal(b, (*plain)(f))
}

// A Problem is something wrong with one test as written: Msg, at Field (a
// path Under the test, "" for the test itself), with Hint saying what to
// write instead. A format's reader reports it to its Collector at the
// test's path.
type Problem struct {
	Field, Hint, Msg string
}

// toMessages converts written messages, saying what cannot be sent.
func toMessages(raw []RawMessage) ([]chat.Message, []Problem) {
	var out []chat.Message
	var probs []Problem
	for i, rm := range raw {
		at := IndexPath("messages", i)
		m := chat.Message{Role: strings.ToLower(strings.TrimSpace(rm.Role)), Name: rm.Name, ToolCallID: rm.ToolCallID}
		text, ok := messageText(rm.Content)
		if !ok {
			probs = append(probs, Problem{JoinPath(at, "content"),
				`content is text, null, or a list of {"type": "text", "text": "..."} parts`,
				"message content is neither text nor a list of text parts"})
		}
		m.Content = text
		for k, tc := range rm.ToolCalls {
			call, prob := tc.toCall()
			if prob != "" {
				probs = append(probs, Problem{IndexPath(JoinPath(at, "tool_calls"), k),
					`write {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{...}"}}`, prob})
			}
			m.ToolCalls = append(m.ToolCalls, call)
		}
		if len(rm.ToolCalls) > 0 && m.Role != "assistant" {
			probs = append(probs, Problem{JoinPath(at, "tool_calls"), "only assistant messages carry tool_calls",
				fmt.Sprintf("a %q message has tool_calls", m.Role)})
		}
		out = append(out, m)
	}
	return out, probs
}

// toCall reads either shape of a call; the message says what is missing.
func (tc rawToolCall) toCall() (chat.ToolCall, string) {
	call := chat.ToolCall{ID: tc.ID, Name: tc.Name}
	args := tc.Arguments
	if f := tc.Function; f != nil {
		if f.Name != "" {
			call.Name = f.Name
		}
		if f.Arguments != nil {
			args = f.Arguments
		}
	}
	switch a := args.(type) {
	case nil:
	case string:
		call.Arguments = a
	default:
		b, err := json.Marshal(JSONNormalize(a))
		if err != nil {
			return call, "its arguments cannot be written as JSON"
		}
		call.Arguments = string(b)
	}
	switch {
	case strings.TrimSpace(call.Name) == "":
		return call, "tool call has no function name"
	case tc.Type != "" && tc.Type != "function":
		return call, fmt.Sprintf("tool call type %q is not \"function\"", tc.Type)
	}
	return call, ""
}

// messageText reads a content: text, null, or text parts (other parts,
// images, are not sent; ok is false when there is no text part to send in
// place of them).
func messageText(v any) (string, bool) {
	switch c := v.(type) {
	case nil:
		return "", true
	case string:
		return c, true
	case []any:
		var parts []string
		for _, p := range c {
			m, ok := p.(map[string]any)
			if !ok {
				return "", false
			}
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n"), len(parts) > 0 || len(c) == 0
	}
	return "", false
}

// DecodeMessages reads messages from generic decoded data (inspect's
// input, a promptfoo chat prompt, BFCL's question) through RawMessage, so
// every format reads tool calls alike.
func DecodeMessages(v any) ([]chat.Message, []Problem, bool) {
	b, err := json.Marshal(JSONNormalize(v))
	if err != nil {
		return nil, nil, false
	}
	var raw []RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, nil, false
	}
	msgs, probs := toMessages(raw)
	return msgs, probs, true
}
