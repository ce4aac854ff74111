package config

import (
	"encoding/json"
	"slices"
	"strings"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// ToTest folds the accepted spellings into one Test and gives values from
// TOML and JSON the same Go types (numbers float64, objects map[string]any),
// so a check's args compare alike whichever format they came from. What it
// cannot convert, problems says.
func (rt RawTest) ToTest() Test {
	msgs, _ := toMessages(rt.Messages)
	mocks, _ := mockTools(rt.MockTools)
	t := Test{
		ID:            strings.TrimSpace(rt.ID),
		Name:          rt.Name,
		Category:      rt.Category,
		Severity:      strings.ToLower(strings.TrimSpace(rt.Severity)),
		System:        rt.System,
		User:          rt.User,
		Messages:      msgs,
		ToolChoice:    normalizeToolChoice(rt.ToolChoice),
		Criteria:      foldCriteria(rt.Criteria, rt.PassCriteria, rt.FailCriteria),
		Reference:     rt.Reference,
		Expect:        strings.ToUpper(strings.TrimSpace(rt.ExpectVerdict)),
		Mode:          NormalizeMode(rt.Mode),
		MaxIterations: rt.MaxIterations,
		MockTools:     mocks,
	}
	for _, tool := range rt.Tools {
		if tool.Type == "" {
			tool.Type = "function"
		}
		tool.Function.Parameters = JSONNormalize(tool.Function.Parameters)
		t.Tools = append(t.Tools, tool)
	}
	for _, c := range rt.Checks {
		c.Type = strings.ToLower(strings.TrimSpace(c.Type))
		if c.Args != nil {
			c.Args, _ = JSONNormalize(c.Args).(map[string]any)
		}
		c.Schema = JSONNormalize(c.Schema)
		t.Checks = append(t.Checks, c)
	}
	if rf := rt.ResponseFormat; rf != nil {
		f := &chat.ResponseFormat{Type: rf.Type, Name: rf.Name, Schema: rf.Schema, Strict: rf.Strict}
		if js := rf.JSONSchema; js != nil {
			f.Name, f.Schema, f.Strict = js.Name, js.Schema, js.Strict
		}
		f.Schema = JSONNormalize(f.Schema)
		t.ResponseFormat = f
	}
	return t
}

// Problems says what ToTest could not convert, at fields under the test.
func (rt RawTest) Problems() []Problem {
	_, probs := toMessages(rt.Messages)
	if _, msg := mockTools(rt.MockTools); msg != "" {
		probs = append(probs, Problem{"mock_tools",
			`write mock_tools = { read_file = { "config.json" = "{...}", _default = "no such file" } }`, msg})
	}
	return probs
}

// Under is the path of field (itself a path) under base.
func Under(base, field string) string {
	switch {
	case field == "":
		return base
	case base == "":
		return field
	case strings.HasPrefix(field, "["):
		return base + field
	}
	return base + "." + field
}

// FinishTests is every loader's last step: it completes the tests (what
// depends on the whole test, see complete), validates them, and returns
// them, or the problems found here and before (errs).
func FinishTests(tests []Test, src *Source, errs Errors, n *Notes) ([]Test, error) {
	return FinishTestsAt(tests, src, "tests", errs, n)
}

// FinishTestsAt is finishTests for tests that sit under root in the file.
func FinishTestsAt(tests []Test, src *Source, root string, errs Errors, n *Notes) ([]Test, error) {
	for i := range tests {
		complete(&tests[i], n)
	}
	errs = append(errs, validateTestsAt(tests, src, root)...)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return tests, nil
}

// complete fills what a test's parts need from the rest of it:
//
//   - an agent test without max_iterations gets DefaultMaxIterations;
//   - a valid-tool-calls check gets the test's tools (args.tools);
//   - a javascript check gets the test's id and source (for its errors), and
//     reads a JSON reply parsed when the test asks for a json_schema
//     response_format, as promptfoo does;
//   - an Expect becomes a verdict check, unless the test has one;
//   - a test with both user and messages, whose user is no user turn of the
//     messages, is noted: messages are sent, user is not.
func complete(t *Test, n *Notes) {
	if t.Mode == ModeAgent && t.MaxIterations == 0 {
		t.MaxIterations = DefaultMaxIterations
	}
	hasVerdict := false
	for i := range t.Checks {
		c := &t.Checks[i]
		switch strings.TrimPrefix(c.Type, "not-") {
		case "valid-tool-calls":
			if _, ok := c.Args["tools"]; !ok && len(t.Tools) > 0 {
				c.Args = withArg(c.Args, "tools", toolParameters(t.Tools))
			}
		case "javascript":
			c.Args = withArg(c.Args, "test_id", t.ID)
			if t.Source != "" {
				c.Args = withArg(c.Args, "source", t.Source)
			}
			if _, ok := c.Args["output"]; !ok && t.ResponseFormat != nil && t.ResponseFormat.Type == "json_schema" {
				c.Args = withArg(c.Args, "output", "json")
			}
		case "verdict":
			hasVerdict = true
		}
	}
	if t.Expect != "" && !hasVerdict {
		t.Checks = append(t.Checks, check.Check{Type: "verdict", Value: t.Expect})
	}
	if t.User != "" && len(t.Messages) > 0 && !slices.ContainsFunc(t.Messages, func(m chat.Message) bool {
		return m.Role == "user" && strings.TrimSpace(m.Content) == strings.TrimSpace(t.User)
	}) {
		n.Add("gives both user and messages, and user is none of the messages' user turns: the messages are sent, user is not", t.ID)
	}
}

func withArg(args map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(args)+1)
	for key, val := range args {
		out[key] = val
	}
	out[k] = v
	return out
}

// toolParameters maps each tool to its parameters schema, for
// valid-tool-calls.
func toolParameters(tools []chat.Tool) map[string]any {
	out := map[string]any{}
	for _, tool := range tools {
		out[tool.Function.Name] = JSONNormalize(tool.Function.Parameters)
	}
	return out
}

// foldCriteria joins criteria with pass_criteria and fail_criteria, which
// prompt-prix and others write apart.
func foldCriteria(criteria, pass, fail string) string {
	var parts []string
	if s := strings.TrimSpace(criteria); s != "" {
		parts = append(parts, s)
	}
	if s := strings.TrimSpace(pass); s != "" {
		parts = append(parts, "Pass if: "+s)
	}
	if s := strings.TrimSpace(fail); s != "" {
		parts = append(parts, "Fail if: "+s)
	}
	return strings.Join(parts, "\n")
}

// normalizeToolChoice turns the short table {name = "f"} into OpenAI's
// {"type": "function", "function": {"name": "f"}}; anything else is kept for
// validation to judge.
func normalizeToolChoice(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if name, ok := m["name"].(string); ok && len(m) == 1 {
		return map[string]any{"type": "function", "function": map[string]any{"name": name}}
	}
	return JSONNormalize(m)
}

// toolChoiceName returns the function a table tool_choice names.
func toolChoiceName(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["type"] != "function" || len(m) != 2 {
		return "", false
	}
	fn, ok := m["function"].(map[string]any)
	if !ok {
		return "", false
	}
	name, ok := fn["name"].(string)
	return name, ok && name != ""
}

// JSONNormalize round-trips v through JSON, so TOML's int64s become
// float64s, its dates strings, and YAML's maps map[string]any.
func JSONNormalize(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// Request converts a test's tools, tool_choice and response_format, written
// as OpenAI's API takes them, into a Test's, as a native battery's are.
func Request(tools []chat.Tool, toolChoice any, rf *RawResponseFormat) ([]chat.Tool, any, *chat.ResponseFormat) {
	t := RawTest{Tools: tools, ToolChoice: toolChoice, ResponseFormat: rf}.ToTest()
	return t.Tools, t.ToolChoice, t.ResponseFormat
}
