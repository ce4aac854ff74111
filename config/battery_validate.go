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
)

// validateTests checks a loaded battery. src maps tests[i] (and, for native
// files, every field under it) to lines; messages name the test by id.
func validateTests(tests []Test, src *source) Errors {
	v := newCollector(src)
	if len(tests) == 0 {
		v.add("tests", "add a [[tests]] table with id and user", "the battery has no tests")
		return v.errs
	}
	ids := map[string]int{}
	for i := range tests {
		t := &tests[i]
		base := indexPath("tests", i)
		at := func(k string) string { return joinPath(base, k) }
		label := fmt.Sprintf("test %q", t.ID)
		switch first, dup := ids[t.ID]; {
		case t.ID == "":
			label = fmt.Sprintf("test #%d", i+1)
			v.add(at("id"), `add id = "weather-paris" (ids pick tests with --tests)`, "%s has no id", label)
		case dup:
			v.add(at("id"), "give each test its own id",
				"duplicate test id %q: here and at %s", t.ID, tests[first].Source)
		default:
			ids[t.ID] = i
		}
		switch {
		case t.User == "" && len(t.Messages) == 0:
			v.add(base, `add user = "..." or [[tests.messages]] with role and content`, "%s has no prompt", label)
		case t.User != "" && len(t.Messages) > 0:
			v.add(at("messages"), "give user or messages, not both", "%s has both user and messages", label)
		}
		for k, m := range t.Messages {
			if !slices.Contains(messageRoles, m.Role) {
				v.add(joinPath(indexPath(at("messages"), k), "role"), didYouMean(m.Role, messageRoles),
					"%s: unknown message role %q", label, m.Role)
			}
		}
		tools := validateTools(v, t, at, label)
		validateToolChoice(v, t, at, label, tools)
		validateResponseFormat(v, t, at, label)
		for k, c := range t.Checks {
			validateCheck(v, c, indexPath(at("checks"), k), label, tools)
		}
	}
	return v.errs
}

// validateTools checks the tool definitions and returns their names.
func validateTools(v *collector, t *Test, at func(string) string, label string) []string {
	var names []string
	for k, tool := range t.Tools {
		p := indexPath(at("tools"), k)
		if tool.Type != "function" {
			v.add(joinPath(p, "type"), `OpenAI tools are type = "function"`, "%s: unknown tool type %q", label, tool.Type)
		}
		name := tool.Function.Name
		switch {
		case name == "":
			v.add(joinPath(p, "function"), "add [tests.tools.function] with name, description and parameters",
				"%s: tool has no function name", label)
		case slices.Contains(names, name):
			v.add(joinPath(joinPath(p, "function"), "name"), "give each tool its own name",
				"%s: tool %q is defined twice", label, name)
		default:
			names = append(names, name)
		}
	}
	return names
}

func validateToolChoice(v *collector, t *Test, at func(string) string, label string, tools []string) {
	if t.ToolChoice == nil {
		return
	}
	field := at("tool_choice")
	hint := `tool_choice is "auto", "none", "required", or {type = "function", function = {name = "..."}}`
	switch tc := t.ToolChoice.(type) {
	case string:
		if !slices.Contains(toolChoices, tc) {
			v.add(field, didYouMean(tc, toolChoices), "%s: unknown tool_choice %q", label, tc)
			return
		}
		if tc == "required" && len(tools) == 0 {
			v.add(field, "add [[tests.tools]], or drop tool_choice", `%s: tool_choice "required" but no tools`, label)
		}
	default:
		name, ok := toolChoiceName(tc)
		if !ok {
			v.add(field, hint, "%s: tool_choice must name a function", label)
			return
		}
		if !slices.Contains(tools, name) {
			v.add(field, didYouMean(name, tools), "%s: tool_choice names %q, which is not among its tools", label, name)
		}
	}
}

func validateResponseFormat(v *collector, t *Test, at func(string) string, label string) {
	rf := t.ResponseFormat
	if rf == nil {
		return
	}
	if !slices.Contains(responseFormats, rf.Type) {
		v.add(joinPath(at("response_format"), "type"), didYouMean(rf.Type, responseFormats),
			"%s: unknown response_format type %q", label, rf.Type)
	}
	if rf.Type == "json_schema" && rf.Schema == nil {
		v.add(at("response_format"), "add schema = { ... } (a JSON Schema)", "%s: json_schema response_format without a schema", label)
	}
}

// validateCheck reports a check's problems at the field they are in; the
// judge package, which runs checks, has the last word through
// check.ValidateCheck (a schema it cannot compile, say).
func validateCheck(v *collector, c check.Check, p, label string, tools []string) {
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
		v.add(joinPath(p, "type"), hint, "%s: unknown check type %q", label, c.Type)
		return
	}
	before := len(v.errs)
	defer func() {
		if len(v.errs) == before {
			if err := check.ValidateCheck(c); err != nil {
				v.add(p, "", "%s: %v", label, err)
			}
		}
	}()
	switch base {
	case "equals", "contains", "icontains", "starts-with":
		if c.Value == "" {
			v.add(p, `add value = "..."`, "%s: %s check without a value", label, c.Type)
		}
	case "regex":
		if c.Value == "" {
			v.add(p, `add value = "pattern"`, "%s: regex check without a pattern", label)
		} else if _, err := regexp.Compile(c.Value); err != nil {
			v.add(joinPath(p, "value"), "patterns use Go's RE2 syntax (no lookaround or backreferences)",
				"%s: bad regex %q: %v", label, c.Value, err)
		}
	case "max-latency":
		if d, err := time.ParseDuration(c.Value); err != nil || d <= 0 {
			v.add(joinPath(p, "value"), `write e.g. value = "5s" (units: ms, s, m)`,
				"%s: max-latency %q is not a positive duration", label, c.Value)
		}
	case "json-schema":
		if c.Schema == nil {
			v.add(p, "add schema = { ... } (a JSON Schema)", "%s: json-schema check without a schema", label)
		}
	case "tool-call":
		switch {
		case c.Name == "":
			v.add(p, `add name = "get_weather" (and args = {...} to match arguments)`, "%s: %s check without a name", label, c.Type)
		case len(tools) == 0 && c.Type == "tool-call":
			v.add(p, "add [[tests.tools]] defining it", "%s: checks for a call to %q but offers no tools", label, c.Name)
		case len(tools) > 0 && !slices.Contains(tools, c.Name):
			v.add(joinPath(p, "name"), didYouMean(c.Name, tools), "%s: %s check names %q, which is not among its tools", label, c.Type, c.Name)
		}
	}
}
