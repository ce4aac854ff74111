package config

import (
	"encoding/json"
	"fmt"
	"strings"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// ppPrompt is one prompt-prix test, as its JSON and JSONL batteries write
// it. Fields pitwall has no use for (severity, notes) are ignored.
type ppPrompt struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Category     string         `json:"category"`
	System       string         `json:"system"`
	User         string         `json:"user"`
	Messages     []chat.Message `json:"messages"`
	Tools        []chat.Tool    `json:"tools"`
	ToolChoice   any            `json:"tool_choice"`
	Expected     map[string]any `json:"expected"`
	Criteria     string         `json:"criteria"`
	PassCriteria string         `json:"pass_criteria"`
	FailCriteria string         `json:"fail_criteria"`
}

// importPromptPrixJSON reads {"test_suite": ..., "prompts": [...]}.
func importPromptPrixJSON(path string, data []byte) ([]Test, error) {
	var f struct {
		Prompts []ppPrompt `json:"prompts"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	src, err := locateJSON(path, data, 0, "")
	if err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	tests := make([]Test, len(f.Prompts))
	for i, p := range f.Prompts {
		line := src.line(indexPath("prompts", i))
		src.set(indexPath("tests", i), line)
		tests[i] = p.toTest()
		tests[i].Source = fmt.Sprintf("%s:%d", path, line)
	}
	if err := validateTests(tests, src).err(); err != nil {
		return nil, err
	}
	return tests, nil
}

// toTest maps a prompt-prix prompt onto a Test. Its expected block becomes
// the checks it can be said as, and the whole block goes to the judge as the
// reference, since the rest of it (enum validity, patterns, structure) is
// for the judge to weigh.
func (p ppPrompt) toTest() Test {
	rt := rawTest{
		ID: p.ID, Name: p.Name, Category: p.Category, System: p.System, User: p.User,
		Messages: p.Messages, Tools: p.Tools, ToolChoice: p.ToolChoice,
		Criteria: p.Criteria, PassCriteria: p.PassCriteria, FailCriteria: p.FailCriteria,
	}
	if len(p.Expected) > 0 {
		if b, err := json.Marshal(p.Expected); err == nil {
			rt.Reference = "Expected: " + string(b)
		}
		rt.Checks = expectedChecks(p.Expected)
	}
	return rt.toTest()
}

// expectedChecks turns the parts of prompt-prix's expected block that are
// deterministic into checks.
func expectedChecks(e map[string]any) []check.Check {
	var checks []check.Check
	str := func(k string) string { s, _ := e[k].(string); return strings.TrimSpace(s) }
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }

	if name := str("tool_name"); name != "" {
		c := check.Check{Type: "tool-call", Name: name}
		// match_mode "contains" means substring matches, which args (an
		// exact subset) cannot say; the judge sees them in the reference.
		if params := obj(e["params"]); len(params) > 0 && str("match_mode") != "contains" {
			c.Args = params
		}
		checks = append(checks, c)
		if not := obj(e["params_not"]); len(not) > 0 {
			checks = append(checks, check.Check{Type: "not-tool-call", Name: name, Args: not})
		}
	}
	if name := str("tool_name_not"); name != "" {
		checks = append(checks, check.Check{Type: "not-tool-call", Name: name})
	}
	if calls, ok := e["tool_calls"].([]any); ok {
		for _, call := range calls {
			m := obj(call)
			name, _ := m["tool_name"].(string)
			if name == "" {
				continue
			}
			c := check.Check{Type: "tool-call", Name: name}
			if params := obj(m["params"]); len(params) > 0 {
				c.Args = params
			}
			checks = append(checks, c)
		}
	}
	if s := str("response_contains"); s != "" {
		checks = append(checks, check.Check{Type: "contains", Value: s})
	}
	if b, _ := e["no_tool_call"].(bool); b {
		checks = append(checks, check.Check{Type: "no-tool-call"})
	}
	return checks
}
