package check

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
)

// The checks that look inside tool calls' arguments (see the list in
// checks.go). A check with a Name reads the calls to that tool, one without
// reads every call, and it passes when one of those calls meets all of it.

var argKinds = map[string]checkKind{
	"tool-call-any":      {label: namesLabel, validate: needNames, run: runToolCallAny},
	"first-tool-call":    {label: toolCallLabel, validate: validToolCall, run: runFirstToolCall},
	"tool-call-count":    {label: countLabel, validate: validCount, run: runToolCallCount},
	"tool-args-enum":     {label: argsLabel, validate: validArgsMap(enumSpec), run: runArgs(enumSpec)},
	"tool-args-required": {label: requiredLabel, validate: validRequired, run: runRequired},
	"tool-args-types":    {label: argsLabel, validate: validArgsMap(typeSpec), run: runArgs(typeSpec)},
	"tool-args-pattern":  {label: argsLabel, validate: validArgsMap(patternSpec), run: runArgs(patternSpec)},
	"tool-args-contains": {label: argsLabel, validate: validArgsMap(containsSpec), run: runArgs(containsSpec)},
	"valid-tool-calls":   {label: noLabel, validate: validToolsArg, run: runValidToolCalls},
}

// call is a tool call with its arguments decoded (nil when they are not
// JSON).
type call struct {
	chat.ToolCall
	args any
}

// callsTo returns the reply's calls to name (every call when name is
// empty), or a reason why there is none.
func callsTo(r reply, name string) ([]call, string) {
	if len(r.ToolCalls) == 0 {
		return nil, "no tool call; reply was " + quote(strings.TrimSpace(r.answer), 60)
	}
	name = strings.TrimSpace(name)
	var out []call
	for _, tc := range r.ToolCalls {
		if name != "" && tc.Name != name {
			continue
		}
		args, err := callArgs(tc)
		if err != nil {
			args = nil
		}
		out = append(out, call{tc, args})
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("no call to %s; called %s", name, callsText(r.ToolCalls))
	}
	return out, ""
}

func nameOr(c Check) string {
	if n := strings.TrimSpace(c.Name); n != "" {
		return n
	}
	return "any tool"
}

// tool-call-any

func needNames(c Check) error {
	_, err := stringList(c.Args, "names")
	return err
}

func namesLabel(c Check) string {
	names, _ := stringList(c.Args, "names")
	return textutil.Clip(strings.Join(names, "|"), 60)
}

func runToolCallAny(c Check, r reply) (bool, string, error) {
	names, err := stringList(c.Args, "names")
	if err != nil {
		return false, "", err
	}
	if len(r.ToolCalls) == 0 {
		return false, "no tool call; reply was " + quote(strings.TrimSpace(r.answer), 60), nil
	}
	for _, tc := range r.ToolCalls {
		if slices.Contains(names, tc.Name) {
			return true, "called " + callText(tc, 60), nil
		}
	}
	return false, "called " + callsText(r.ToolCalls), nil
}

// first-tool-call

func runFirstToolCall(c Check, r reply) (bool, string, error) {
	if len(r.ToolCalls) == 0 {
		return false, "no tool call; reply was " + quote(strings.TrimSpace(r.answer), 60), nil
	}
	first := r
	first.ToolCalls = r.ToolCalls[:1]
	pass, found, err := runToolCall(c, first)
	if err != nil || pass {
		return pass, "first " + found, err
	}
	return false, "the first call was " + callText(r.ToolCalls[0], 60) + ": " + found, nil
}

// tool-call-count

var countForm = regexp.MustCompile(`^(>=|<=|=)?\s*(\d+)$`)

func parseCount(v string) (op string, n int, err error) {
	m := countForm.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return "", 0, fmt.Errorf(`count %q is not a number of calls (write "2", ">=1" or "<=3")`, v)
	}
	n, err = strconv.Atoi(m[2])
	if err != nil {
		return "", 0, fmt.Errorf("count %q is too large", v)
	}
	if m[1] == "" {
		m[1] = "="
	}
	return m[1], n, nil
}

func validCount(c Check) error {
	_, _, err := parseCount(c.Value)
	return err
}

func countLabel(c Check) string {
	op, n, err := parseCount(c.Value)
	if err != nil {
		return quote(c.Value, 20)
	}
	s := fmt.Sprintf("%s %d", op, n)
	if c.Name != "" {
		s = c.Name + " " + s
	}
	return s
}

func runToolCallCount(c Check, r reply) (bool, string, error) {
	op, n, err := parseCount(c.Value)
	if err != nil {
		return false, "", err
	}
	got := 0
	for _, tc := range r.ToolCalls {
		if c.Name == "" || tc.Name == strings.TrimSpace(c.Name) {
			got++
		}
	}
	pass := got == n
	switch op {
	case ">=":
		pass = got >= n
	case "<=":
		pass = got <= n
	}
	found := fmt.Sprintf("%d call(s)", got)
	if got > 0 {
		found += ": " + callsText(r.ToolCalls)
	}
	return pass, found, nil
}

// tool-args-required

func requiredParams(c Check) ([]string, error) { return stringList(c.Args, "params") }

func validRequired(c Check) error {
	_, err := requiredParams(c)
	return err
}

func requiredLabel(c Check) string {
	ps, _ := requiredParams(c)
	return nameOr(c) + "(" + textutil.Clip(strings.Join(ps, ", "), 50) + ")"
}

func runRequired(c Check, r reply) (bool, string, error) {
	params, err := requiredParams(c)
	if err != nil {
		return false, "", err
	}
	calls, why := callsTo(r, c.Name)
	if calls == nil {
		return false, why, nil
	}
	first := ""
	for _, cl := range calls {
		args, _ := cl.args.(map[string]any)
		var missing []string
		for _, p := range params {
			if v, ok := args[p]; !ok || v == nil {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			return true, "called " + callText(cl.ToolCall, 60), nil
		}
		if first == "" {
			first = fmt.Sprintf("%s lacks %s", callText(cl.ToolCall, 50), strings.Join(missing, ", "))
		}
	}
	return false, first, nil
}

// The per-argument checks: Args maps an argument's name to what it must
// be. A spec says how to read that and how to hold a value to it.

type argSpec struct {
	// compile checks one argument's rule as written.
	compile func(rule any) error
	// meet says why value (ok false: absent) does not meet rule, or "".
	meet func(rule any, value any, ok bool) string
}

var (
	enumSpec = argSpec{
		compile: func(rule any) error {
			if l, ok := rule.([]any); !ok || len(l) == 0 {
				return errors.New("must list the allowed values")
			}
			return nil
		},
		meet: func(rule, v any, ok bool) string {
			if !ok {
				return "missing"
			}
			for _, allowed := range rule.([]any) {
				if argsMatch(allowed, v, "") == "" {
					return ""
				}
			}
			return fmt.Sprintf("%s is not one of %s", describe(v), describeList(rule.([]any)))
		},
	}
	typeSpec = argSpec{compile: compileTypeRule, meet: meetTypeRule}

	patternSpec = argSpec{
		compile: func(rule any) error {
			s, ok := rule.(string)
			if !ok {
				return errors.New("must be a pattern (a string)")
			}
			_, err := regexp.Compile(s)
			return err
		},
		meet: func(rule, v any, ok bool) string {
			s, isStr := v.(string)
			switch {
			case !ok:
				return "missing"
			case !isStr:
				return describe(v) + " is not a string"
			case !regexp.MustCompile(rule.(string)).MatchString(s):
				return fmt.Sprintf("%s does not match /%s/", strconv.Quote(textutil.Clip(s, 40)), rule)
			}
			return ""
		},
	}
	containsSpec = argSpec{
		compile: func(rule any) error {
			if s, ok := rule.(string); !ok || s == "" {
				return errors.New("must be the text to find")
			}
			return nil
		},
		meet: func(rule, v any, ok bool) string {
			s, isStr := v.(string)
			switch {
			case !ok:
				return "missing"
			case !isStr:
				return describe(v) + " is not a string"
			case !strings.Contains(strings.ToLower(s), strings.ToLower(rule.(string))):
				return fmt.Sprintf("%s does not contain %q", strconv.Quote(textutil.Clip(s, 40)), rule)
			}
			return ""
		},
	}
)

// argRules reads Args as argument name → rule, in plain JSON shapes.
func argRules(c Check) (map[string]any, error) {
	v, err := plain(c.Args)
	if err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil, errors.New("needs args naming at least one argument")
	}
	return m, nil
}

func validArgsMap(spec argSpec) func(Check) error {
	return func(c Check) error {
		rules, err := argRules(c)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(rules)) {
			if err := spec.compile(rules[k]); err != nil {
				return fmt.Errorf("args.%s: %w", k, err)
			}
		}
		return nil
	}
}

func argsLabel(c Check) string {
	rules, err := argRules(c)
	if err != nil {
		return nameOr(c)
	}
	return nameOr(c) + "(" + textutil.Clip(compactJSON(rules), 60) + ")"
}

func runArgs(spec argSpec) func(Check, reply) (bool, string, error) {
	return func(c Check, r reply) (bool, string, error) {
		rules, err := argRules(c)
		if err != nil {
			return false, "", err
		}
		calls, why := callsTo(r, c.Name)
		if calls == nil {
			return false, why, nil
		}
		keys := slices.Sorted(maps.Keys(rules))
		first := ""
		for _, cl := range calls {
			args, isObj := cl.args.(map[string]any)
			if !isObj {
				if first == "" {
					first = fmt.Sprintf("%s arguments are not a JSON object", callText(cl.ToolCall, 50))
				}
				continue
			}
			bad := ""
			for _, k := range keys {
				v, ok := args[k]
				if why := spec.meet(rules[k], v, ok); why != "" {
					bad = pathOr(pathKey(k)) + ": " + why
					break
				}
			}
			if bad == "" {
				return true, "called " + callText(cl.ToolCall, 60), nil
			}
			if first == "" {
				first = cl.Name + " " + bad
			}
		}
		return false, first, nil
	}
}

// Type names of tool-args-types: JSON Schema's, and the Python and
// TypeScript names batteries also write.
var typeAliases = map[string]string{
	"string": "string", "str": "string", "text": "string",
	"number": "number", "float": "number", "double": "number",
	"integer": "integer", "int": "integer",
	"boolean": "boolean", "bool": "boolean",
	"array": "array", "list": "array",
	"object": "object", "dict": "object",
	"null": "null", "none": "null",
}

func compileTypeRule(rule any) error {
	switch x := rule.(type) {
	case string:
		if _, ok := typeAliases[strings.ToLower(strings.TrimSpace(x))]; !ok {
			return fmt.Errorf("unknown type %q (want string, number, integer, boolean, array, object or null)", x)
		}
		return nil
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := compileTypeRule(x[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	}
	return errors.New("must be a type name, or an object of them for a nested object")
}

func meetTypeRule(rule, v any, ok bool) string {
	if !ok {
		return "missing"
	}
	switch x := rule.(type) {
	case string:
		want := typeAliases[strings.ToLower(strings.TrimSpace(x))]
		if typeAllowed([]string{want}, v) {
			return ""
		}
		return fmt.Sprintf("want %s, got %s", want, describe(v))
	case map[string]any:
		obj, isObj := v.(map[string]any)
		if !isObj {
			return fmt.Sprintf("want an object, got %s", describe(v))
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			inner, ok := obj[k]
			if why := meetTypeRule(x[k], inner, ok); why != "" {
				return strings.TrimPrefix(pathKey(k), ".") + ": " + why
			}
		}
	}
	return ""
}

// valid-tool-calls

// toolSchemas reads Args["tools"]: tool name → parameters schema (null
// when the tool takes anything).
func toolSchemas(c Check) (map[string]*schema, error) {
	v, err := plain(c.Args["tools"])
	if err != nil {
		return nil, fmt.Errorf("args.tools: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, errors.New("needs args.tools, the offered tools by name (config fills it from the test's tools)")
	}
	out := make(map[string]*schema, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if m[name] == nil {
			out[name] = nil
			continue
		}
		s, err := compileSchema(m[name])
		if err != nil {
			return nil, fmt.Errorf("args.tools.%s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
}

func validToolsArg(c Check) error {
	_, err := toolSchemas(c)
	return err
}

func runValidToolCalls(c Check, r reply) (bool, string, error) {
	tools, err := toolSchemas(c)
	if err != nil {
		return false, "", err
	}
	if len(r.ToolCalls) == 0 {
		return false, "no tool call; reply was " + quote(strings.TrimSpace(r.answer), 60), nil
	}
	for _, tc := range r.ToolCalls {
		s, offered := tools[tc.Name]
		if !offered {
			return false, fmt.Sprintf("called %q, which is not among the tools offered", tc.Name), nil
		}
		args, err := callArgs(tc)
		if err != nil {
			return false, fmt.Sprintf("%s arguments are not JSON: %s", tc.Name, quote(tc.Arguments, 60)), nil
		}
		if _, ok := args.(map[string]any); !ok {
			return false, fmt.Sprintf("%s arguments are a JSON %s, not an object", tc.Name, jsonType(args)), nil
		}
		if s == nil {
			continue
		}
		if errs := s.validate(args); len(errs) > 0 {
			return false, tc.Name + ": " + strings.Join(errs, "; "), nil
		}
	}
	return true, "every call meets its tool's schema: " + callsText(r.ToolCalls), nil
}
