package check

import (
	"fmt"
	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
	"strings"
)

// Validate is the semantic validation every reply gets, whatever its test's
// checks. It returns one result per rule that applies, passed or not:
//
//	not-empty              unless the test wants an empty reply (Expect.Empty): the reply has
//	                       text (inline <think> removed) or a tool call
//	not-refusal            when the reply has text, unless the test wants a refusal
//	                       (Expect.Refusal): it does not open with a refusal (refusal.go)
//	tool_choice=required   with tools and tool_choice "required" (or "any"): some tool call was made
//	tool_choice=none       with tools and tool_choice "none": no tool call was made
//	tool_choice=NAME       with tools and a named function: a call was made, and only to NAME
//	tools-offered          when the test offered no tools: no tool call was made
//	tool-args-json         when tool calls were made: each call's arguments are a JSON object ("" counts as {})
//	response_format=T      for json_object or json_schema, when the reply has text: it is JSON (a
//	                       fence around all of it is allowed); json_object wants an object, and
//	                       json_schema's schema is checked as far as schema.go's subset goes
//
// tool_choice is ignored without tools, because servers ignore or reject it.
func Validate(e Expect, out Output) []scoring.CheckResult {
	thinking, answer := SplitThink(out.Content)
	text := strings.TrimSpace(answer)
	calls := out.ToolCalls

	var res []scoring.CheckResult
	if !e.Empty {
		res = append(res, notEmpty(text, thinking, calls))
	}
	if text != "" && !e.Refusal {
		r := scoring.CheckResult{Name: "not-refusal", Pass: !isRefusal(text)}
		if !r.Pass {
			r.Reason = "reply is a refusal: " + quote(text, 80)
		}
		res = append(res, r)
	}
	if e.HasTools {
		if r, ok := toolChoiceResult(e.ToolChoice, calls); ok {
			res = append(res, r)
		}
	} else if len(calls) > 0 {
		res = append(res, scoring.CheckResult{Name: "tools-offered", Reason: "called " + callsText(calls) + " but the test offered no tools"})
	}
	if len(calls) > 0 {
		res = append(res, toolArgsResult(calls))
	}
	if r, ok := responseFormatResult(e.ResponseFormat, text); ok {
		res = append(res, r)
	}
	return res
}

// Passed reports whether every result passed; no results pass.
func Passed(results []scoring.CheckResult) bool {
	for _, r := range results {
		if !r.Pass {
			return false
		}
	}
	return true
}

func notEmpty(text, thinking string, calls []chat.ToolCall) scoring.CheckResult {
	r := scoring.CheckResult{Name: "not-empty", Pass: text != "" || len(calls) > 0}
	switch {
	case r.Pass:
	case thinking != "":
		r.Reason = "no answer after its reasoning (<think> only); max_tokens may be too low"
	default:
		r.Reason = "no text and no tool call"
	}
	return r
}

// toolChoice reads a request's tool_choice: mode is "", "auto", "none",
// "required" or "function", with name set for "function".
func toolChoice(tc any) (mode, name string) {
	v, err := plain(tc)
	if err != nil || v == nil {
		return "", ""
	}
	switch x := v.(type) {
	case string:
		switch m := strings.ToLower(strings.TrimSpace(x)); m {
		case "any":
			return "required", ""
		default:
			return m, ""
		}
	case map[string]any:
		if fn, ok := x["function"].(map[string]any); ok {
			if n, ok := fn["name"].(string); ok && n != "" {
				return "function", n
			}
		}
		if n, ok := x["name"].(string); ok && n != "" {
			return "function", n
		}
	}
	return "", ""
}

func toolChoiceResult(tc any, calls []chat.ToolCall) (scoring.CheckResult, bool) {
	mode, name := toolChoice(tc)
	switch mode {
	case "required":
		r := scoring.CheckResult{Name: "tool_choice=required", Pass: len(calls) > 0}
		if !r.Pass {
			r.Reason = "tool_choice was required but the reply made no tool call"
		}
		return r, true
	case "none":
		r := scoring.CheckResult{Name: "tool_choice=none", Pass: len(calls) == 0}
		if !r.Pass {
			r.Reason = "tool_choice was none but the reply called " + callsText(calls)
		}
		return r, true
	case "function":
		r := scoring.CheckResult{Name: "tool_choice=" + name, Pass: true}
		if len(calls) == 0 {
			r.Pass, r.Reason = false, fmt.Sprintf("tool_choice named %s but the reply made no tool call", name)
		}
		for _, c := range calls {
			if c.Name != name {
				r.Pass, r.Reason = false, fmt.Sprintf("tool_choice named %s but the reply called %s", name, callText(c, 40))
				break
			}
		}
		return r, true
	}
	return scoring.CheckResult{}, false
}

func toolArgsResult(calls []chat.ToolCall) scoring.CheckResult {
	r := scoring.CheckResult{Name: "tool-args-json", Pass: true}
	for _, c := range calls {
		v, err := callArgs(c)
		switch {
		case err != nil:
			r.Pass, r.Reason = false, fmt.Sprintf("%s arguments are not JSON (%v): %s", c.Name, err, quote(c.Arguments, 60))
		case jsonType(v) != "object":
			r.Pass, r.Reason = false, fmt.Sprintf("%s arguments are a JSON %s, not an object: %s", c.Name, jsonType(v), quote(c.Arguments, 60))
		default:
			continue
		}
		break
	}
	return r
}

func responseFormatResult(rf *chat.ResponseFormat, text string) (scoring.CheckResult, bool) {
	if rf == nil || text == "" {
		return scoring.CheckResult{}, false
	}
	kind := strings.ToLower(strings.TrimSpace(rf.Type))
	if kind != "json_object" && kind != "json_schema" {
		return scoring.CheckResult{}, false
	}
	r := scoring.CheckResult{Name: "response_format=" + kind}
	v, err := parseJSON(text)
	if err != nil {
		r.Reason = notJSON(text, err)
		return r, true
	}
	if kind == "json_object" && jsonType(v) != "object" {
		r.Reason = fmt.Sprintf("reply is a JSON %s, not an object", jsonType(v))
		return r, true
	}
	if kind == "json_schema" && rf.Schema != nil {
		// A schema this validator cannot read is the test's problem, not the
		// model's: the reply is then held only to being JSON.
		if s, err := compileSchema(unwrapSchema(rf.Schema)); err == nil {
			if errs := s.validate(v); len(errs) > 0 {
				r.Reason = strings.Join(errs, "; ")
				return r, true
			}
		}
	}
	r.Pass = true
	return r, true
}

// unwrapSchema accepts OpenAI's whole json_schema object ({"name", "schema",
// "strict"}) where the bare schema was meant.
func unwrapSchema(raw any) any {
	v, err := plain(raw)
	if err != nil {
		return raw
	}
	m, ok := v.(map[string]any)
	if !ok {
		return raw
	}
	inner, ok := m["schema"].(map[string]any)
	_, typed := m["type"]
	_, props := m["properties"]
	if ok && !typed && !props {
		return inner
	}
	return raw
}
