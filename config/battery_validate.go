package config

import (
	"fmt"
	"pitwall/judge/check"
	"regexp"
	"slices"
	"strings"
	"time"
)

var (
	toolChoices     = []string{"auto", "none", "required"}
	messageRoles    = []string{"system", "user", "assistant", "tool"}
	responseFormats = []string{"text", "json_object", "json_schema"}
	severities      = []string{"critical", "warning", "info"}
	modes           = []string{"", ModeAgent}
)

// validateTests checks a loaded battery. src maps tests[i] (and, for native
// files, every field under it) to lines; messages name the test by id.
func validateTests(tests []Test, src *Source) Errors {
	return validateTestsAt(tests, src, "tests")
}

// validateTestsAt is validateTests for a file whose tests sit under
// another key (prompt-prix's prompts), so that fields read as written.
func validateTestsAt(tests []Test, src *Source, root string) Errors {
	v := NewCollector(src)
	if len(tests) == 0 {
		v.Add(root, "add a [[tests]] table with id and user", "the battery has no tests")
		return v.Errs
	}
	ids := map[string]int{}
	for i := range tests {
		t := &tests[i]
		base := IndexPath(root, i)
		at := func(k string) string { return JoinPath(base, k) }
		label := fmt.Sprintf("test %q", t.ID)
		switch first, dup := ids[t.ID]; {
		case t.ID == "":
			label = fmt.Sprintf("test #%d", i+1)
			v.Add(at("id"), `add id = "weather-paris" (ids pick tests with --tests)`, "%s has no id", label)
		case dup:
			v.Add(at("id"), "give each test its own id",
				"duplicate test id %q: here and at %s", t.ID, tests[first].Source)
		default:
			ids[t.ID] = i
		}
		if t.User == "" && len(t.Messages) == 0 {
			v.Add(base, `add user = "..." or [[tests.messages]] with role and content`, "%s has no prompt", label)
		}
		for k, m := range t.Messages {
			if !slices.Contains(messageRoles, m.Role) {
				v.Add(JoinPath(IndexPath(at("messages"), k), "role"), DidYouMean(m.Role, messageRoles),
					"%s: unknown message role %q", label, m.Role)
			}
		}
		tools := validateTools(v, t, at, label)
		validateToolChoice(v, t, at, label, tools)
		validateResponseFormat(v, t, at, label)
		validateTestKind(v, t, at, label, tools)
		for k, c := range t.Checks {
			validateCheck(v, c, IndexPath(at("checks"), k), label, tools)
		}
	}
	return v.Errs
}

// validateTestKind checks severity, expect and the agent fields.
func validateTestKind(v *Collector, t *Test, at func(string) string, label string, tools []string) {
	if !slices.Contains(severities, t.Severity) && t.Severity != "" {
		v.Add(at("severity"), DidYouMean(t.Severity, severities), "%s: unknown severity %q", label, t.Severity)
	}
	if t.Expect != "" && !oneWord.MatchString(t.Expect) {
		v.Add(at("expect"), `write the one word the reply's verdict must be, e.g. expect = "FAIL"`,
			"%s: expect %q is not a verdict", label, t.Expect)
	}
	if !slices.Contains(modes, t.Mode) {
		v.Add(at("mode"), `mode = "agent" runs a tool loop (prompt-prix's "react"); leave it out for one request`,
			"%s: unknown mode %q", label, t.Mode)
		return
	}
	// prompt-prix accepts what pitwall's own batteries would be told about:
	// an agent test without tools (its model can only answer), mock tools
	// for tools it does not offer (a call to one is an unknown tool), and
	// loop fields on a test of one request (ignored there).
	lax := t.Dialect == DialectPromptPrix
	if t.Mode != ModeAgent {
		if lax {
			return
		}
		if t.MaxIterations != 0 {
			v.Add(at("max_iterations"), `add mode = "agent", or drop max_iterations`, "%s: max_iterations is for agent tests", label)
		}
		if len(t.MockTools) > 0 {
			v.Add(at("mock_tools"), `add mode = "agent", or drop mock_tools`, "%s: mock_tools is for agent tests", label)
		}
		return
	}
	if len(tools) == 0 && !lax {
		v.Add(at("mode"), "add [[tests.tools]] for the agent to call", "%s: an agent test needs tools", label)
	}
	if t.MaxIterations < 0 {
		v.Add(at("max_iterations"), "write a number of model turns, e.g. max_iterations = 10", "%s: max_iterations must be 1 or more", label)
	}
	for _, name := range sortedKeys(t.MockTools) {
		if len(tools) > 0 && !slices.Contains(tools, name) && !lax {
			v.Add(JoinPath(at("mock_tools"), name), DidYouMean(name, tools),
				"%s: mock_tools answers %q, which is not among its tools", label, name)
		}
	}
}

var oneWord = regexp.MustCompile(`^\w+$`)

// validateTools checks the tool definitions and returns their names.
func validateTools(v *Collector, t *Test, at func(string) string, label string) []string {
	var names []string
	for k, tool := range t.Tools {
		p := IndexPath(at("tools"), k)
		if tool.Type != "function" {
			v.Add(JoinPath(p, "type"), `OpenAI tools are type = "function"`, "%s: unknown tool type %q", label, tool.Type)
		}
		name := tool.Function.Name
		switch {
		case name == "":
			v.Add(JoinPath(p, "function"), "add [tests.tools.function] with name, description and parameters",
				"%s: tool has no function name", label)
		case slices.Contains(names, name):
			v.Add(JoinPath(JoinPath(p, "function"), "name"), "give each tool its own name",
				"%s: tool %q is defined twice", label, name)
		default:
			names = append(names, name)
		}
	}
	return names
}

func validateToolChoice(v *Collector, t *Test, at func(string) string, label string, tools []string) {
	if t.ToolChoice == nil {
		return
	}
	field := at("tool_choice")
	hint := `tool_choice is "auto", "none", "required", or {type = "function", function = {name = "..."}}`
	switch tc := t.ToolChoice.(type) {
	case string:
		if !slices.Contains(toolChoices, tc) {
			v.Add(field, DidYouMean(tc, toolChoices), "%s: unknown tool_choice %q", label, tc)
			return
		}
		if tc == "required" && len(tools) == 0 {
			v.Add(field, "add [[tests.tools]], or drop tool_choice", `%s: tool_choice "required" but no tools`, label)
		}
	default:
		name, ok := toolChoiceName(tc)
		if !ok {
			v.Add(field, hint, "%s: tool_choice must name a function", label)
			return
		}
		if !slices.Contains(tools, name) {
			v.Add(field, DidYouMean(name, tools), "%s: tool_choice names %q, which is not among its tools", label, name)
		}
	}
}

func validateResponseFormat(v *Collector, t *Test, at func(string) string, label string) {
	rf := t.ResponseFormat
	if rf == nil {
		return
	}
	if !slices.Contains(responseFormats, rf.Type) {
		v.Add(JoinPath(at("response_format"), "type"), DidYouMean(rf.Type, responseFormats),
			"%s: unknown response_format type %q", label, rf.Type)
	}
	if rf.Type == "json_schema" && rf.Schema == nil {
		v.Add(at("response_format"), "add schema = { ... } (a JSON Schema)", "%s: json_schema response_format without a schema", label)
	}
}

// validateCheck reports a check's problems at the field they are in; the
// judge package, which runs checks, has the last word through
// check.ValidateCheck (a schema it cannot compile, say).
func validateCheck(v *Collector, c check.Check, p, label string, tools []string) {
	all := check.ValidCheckTypes()
	var bases []string
	for _, t := range all {
		if slices.Contains(all, "not-"+t) {
			bases = append(bases, t)
		}
	}
	base := c.Type
	if !slices.Contains(bases, base) {
		base = strings.TrimPrefix(base, "not-")
	}
	if !slices.Contains(bases, base) {
		hint := "valid: " + strings.Join(bases, ", ") + ", and the not- form of each"
		if n := nearest(c.Type, all); n != "" {
			hint = fmt.Sprintf("did you mean `%s`? ", n) + hint
		}
		v.Add(JoinPath(p, "type"), hint, "%s: unknown check type %q", label, c.Type)
		return
	}
	before := len(v.Errs)
	defer func() {
		if len(v.Errs) == before {
			if err := check.ValidateCheck(c); err != nil {
				v.Add(p, "", "%s: %v", label, err)
			}
		}
	}()
	switch base {
	case "equals", "contains", "icontains", "starts-with":
		// promptfoo's assertions compare with "" as with any text.
		if c.Value == "" && c.Args["output"] != "promptfoo" {
			v.Add(p, `add value = "..."`, "%s: %s check without a value", label, c.Type)
		}
	case "regex":
		if c.Value == "" {
			v.Add(p, `add value = "pattern"`, "%s: regex check without a pattern", label)
		} else if _, err := regexp.Compile(c.Value); err != nil {
			v.Add(JoinPath(p, "value"), "patterns use Go's RE2 syntax (no lookaround or backreferences)",
				"%s: bad regex %q: %v", label, c.Value, err)
		}
	case "max-latency":
		if d, err := time.ParseDuration(c.Value); err != nil || d <= 0 {
			v.Add(JoinPath(p, "value"), `write e.g. value = "5s" (units: ms, s, m)`,
				"%s: max-latency %q is not a positive duration", label, c.Value)
		}
	case "json-schema":
		if c.Schema == nil {
			v.Add(p, "add schema = { ... } (a JSON Schema)", "%s: json-schema check without a schema", label)
		}
	case "first-tool-call", "tool-call-count", "tool-args-enum", "tool-args-required", "tool-args-types",
		"tool-args-pattern", "tool-args-contains":
		if c.Name != "" && len(tools) > 0 && !slices.Contains(tools, c.Name) {
			v.Add(JoinPath(p, "name"), DidYouMean(c.Name, tools), "%s: %s check names %q, which is not among its tools", label, c.Type, c.Name)
		}
	case "tool-call-any":
		names, _ := c.Args["names"].([]any)
		for _, n := range names {
			if s, ok := n.(string); ok && len(tools) > 0 && !slices.Contains(tools, s) {
				v.Add(JoinPath(p, "args"), DidYouMean(s, tools), "%s: %s check names %q, which is not among its tools", label, c.Type, s)
			}
		}
	case "valid-tool-calls":
		if _, ok := c.Args["tools"]; !ok {
			v.Add(p, "add [[tests.tools]]: the check holds each call to the tools offered", "%s: valid-tool-calls check but the test offers no tools", label)
		}
	case "tool-call":
		switch {
		case c.Name == "":
			v.Add(p, `add name = "get_weather" (and args = {...} to match arguments)`, "%s: %s check without a name", label, c.Type)
		case len(tools) == 0 && c.Type == "tool-call":
			v.Add(p, "add [[tests.tools]] defining it", "%s: checks for a call to %q but offers no tools", label, c.Name)
		case len(tools) > 0 && !slices.Contains(tools, c.Name):
			v.Add(JoinPath(p, "name"), DidYouMean(c.Name, tools), "%s: %s check names %q, which is not among its tools", label, c.Type, c.Name)
		}
	}
}
