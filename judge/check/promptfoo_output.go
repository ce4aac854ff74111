package check

import (
	"encoding/json"
	"fmt"
	"strings"
)

// promptfooReply is r as promptfoo's assertions read it (a check with
// args.output "promptfoo", which edges/promptfoo sets): the answer as the
// model wrote it, or, when the reply made tool calls, the JSON text of what
// promptfoo's OpenAI provider returns for them (the calls, or the message
// with its text and calls), with no trimming and no fence unwrapped.
func promptfooReply(r reply) reply {
	r.exact = true
	if len(r.ToolCalls) == 0 {
		return r
	}
	b, err := json.Marshal(promptfooToolOutput(r))
	if err == nil {
		r.answer = string(b)
	}
	return r
}

// pfCall and pfMessage keep the keys in the order the OpenAI API sends
// them, as JSON.stringify writes them in promptfoo.
type pfCall struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function pfFunction `json:"function"`
}

type pfFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type pfMessage struct {
	Role      string   `json:"role"`
	Content   string   `json:"content"`
	ToolCalls []pfCall `json:"tool_calls"`
}

func promptfooToolOutput(r reply) any {
	calls := make([]pfCall, 0, len(r.ToolCalls))
	for i, tc := range r.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i+1)
		}
		calls = append(calls, pfCall{ID: id, Type: "function", Function: pfFunction{Name: tc.Name, Arguments: tc.Arguments}})
	}
	if strings.TrimSpace(r.answer) == "" {
		return calls
	}
	return pfMessage{Role: "assistant", Content: r.answer, ToolCalls: calls}
}

// json decodes the answer: as promptfoo's JSON.parse when exact, else
// allowing a fence around all of it.
func (r reply) json() (any, error) {
	if !r.exact {
		return parseJSON(r.answer)
	}
	var v any
	if err := json.Unmarshal([]byte(r.answer), &v); err != nil {
		return nil, err
	}
	return v, nil
}

func isScript(c Check) bool {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(c.Type)), "not-")
	return t == "javascript"
}
