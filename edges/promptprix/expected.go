package promptprix

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"pitwall/config"
	"pitwall/judge/check"
)

// prompt-prix's expected block says what a good reply does. prompt-prix
// itself scores none of it (its runner checks only refusals, tool_choice
// and a judge battery's verdict; expected is "for future grading"), so the
// meaning of each key is read from its name and from how prompt-prix's own
// batteries use it (their pass_criteria). pitwall checks every key it can,
// deterministically, which makes it stricter than prompt-prix:
//
//	tool_name            a call to it (tool-call); with match_mode "first_step",
//	                     the reply's first call (first-tool-call)
//	params               that call's arguments contain these (tool-call args:
//	                     objects as subsets, strings ignoring case); with
//	                     match_mode "contains", each string argument contains the
//	                     text given, ignoring case (tool-args-contains)
//	params_not           no call to tool_name with these arguments (not-tool-call)
//	tool_name_not        no call to it (not-tool-call)
//	tool_name_any        a call to one of them (tool-call-any)
//	params_enum_valid,   each named argument has one of the values listed
//	params_any           (tool-args-enum)
//	params_required      the arguments are present and not null (tool-args-required)
//	params_types,        each named argument has the type given, nested objects
//	params_structure     by their own keys (tool-args-types)
//	params_pattern       each named argument matches the pattern (tool-args-pattern,
//	                     Go's RE2 syntax, searched anywhere as Python's re.search)
//	tool_calls_count     exactly that many calls (tool-call-count)
//	tool_calls           one tool-call check per listed call
//	response_type        text, tool_call or json (response-type)
//	response_contains    the answer contains it, case-sensitively (contains)
//	no_tool_call         true: no call at all (no-tool-call)
//
// A params_* key without tool_name holds for any call. match_mode values
// other than "contains" and "first_step" only name the test's intent
// (exact, exclusion, structure, …) and change nothing. Other keys (notes)
// are not checks: the judge reads them with the rest of the block, and they
// are noted.
func expectedChecks(e map[string]any, n *config.Notes, id string) ([]check.Check, []config.Problem) {
	var out []check.Check
	var probs []config.Problem
	str := func(k string) string { s, _ := e[k].(string); return strings.TrimSpace(s) }
	obj := func(k string) map[string]any { m, _ := config.JSONNormalize(e[k]).(map[string]any); return m }
	name := str("tool_name")
	mode := strings.ToLower(str("match_mode"))
	if mode != "" && !slices.Contains(matchModes, mode) {
		n.Add(fmt.Sprintf("expected.match_mode %q is not one pitwall knows: the expected keys are checked as written", mode), id)
	}
	add := func(c check.Check, key, hint string) { checked(c, key, hint, &out, &probs) }

	if name != "" {
		c := check.Check{Type: "tool-call", Name: name}
		if mode == "first_step" {
			c.Type = "first-tool-call"
		}
		params := obj("params")
		texts := map[string]any{}
		if mode == "contains" {
			params, texts = splitStrings(params)
		}
		if len(params) > 0 {
			c.Args = params
		}
		add(c, "tool_name", `write "tool_name": "get_weather"`)
		if len(texts) > 0 {
			add(check.Check{Type: "tool-args-contains", Name: name, Args: texts}, "params",
				`with match_mode "contains", params gives the text each argument contains`)
		}
		if not := obj("params_not"); len(not) > 0 {
			add(check.Check{Type: "not-tool-call", Name: name, Args: not}, "params_not", `write "params_not": {"arg": "value"}`)
		}
	} else if _, ok := e["params"]; ok {
		probs = append(probs, config.Problem{Field: "params", Hint: `add "tool_name": the tool these are the arguments of`, Msg: "params without tool_name"})
	}
	if v := str("tool_name_not"); v != "" {
		add(check.Check{Type: "not-tool-call", Name: v}, "tool_name_not", `write "tool_name_not": "execute_code"`)
	}
	if v, ok := e["tool_name_any"]; ok {
		add(check.Check{Type: "tool-call-any", Args: map[string]any{"names": config.JSONNormalize(v)}}, "tool_name_any",
			`write "tool_name_any": ["ask_human", "respond_to_user"]`)
	}
	argsOf := func(k, hint string) (map[string]any, bool) {
		v, ok := e[k]
		if !ok {
			return nil, false
		}
		if m, ok := config.JSONNormalize(v).(map[string]any); ok {
			return m, true
		}
		probs = append(probs, config.Problem{Field: k, Hint: hint, Msg: k + " must be an object naming arguments"})
		return nil, false
	}
	for _, k := range []string{"params_enum_valid", "params_any"} {
		hint := fmt.Sprintf(`write "%s": {"arg": ["allowed", "values"]}`, k)
		if args, ok := argsOf(k, hint); ok {
			add(check.Check{Type: "tool-args-enum", Name: name, Args: args}, k, hint)
		}
	}
	if v, ok := e["params_required"]; ok {
		add(check.Check{Type: "tool-args-required", Name: name, Args: map[string]any{"params": config.JSONNormalize(v)}}, "params_required",
			`write "params_required": ["from_account", "amount"]`)
	}
	for _, k := range []string{"params_types", "params_structure"} {
		hint := fmt.Sprintf(`write "%s": {"arg": "number"} (nested objects as objects)`, k)
		if args, ok := argsOf(k, hint); ok {
			add(check.Check{Type: "tool-args-types", Name: name, Args: args}, k, hint)
		}
	}
	if args, ok := argsOf("params_pattern", `write "params_pattern": {"created_after": "^2025-"}`); ok {
		add(check.Check{Type: "tool-args-pattern", Name: name, Args: args}, "params_pattern", `write "params_pattern": {"created_after": "^2025-"}`)
	}
	if v, ok := e["tool_calls_count"]; ok {
		add(check.Check{Type: "tool-call-count", Value: config.ValueText(config.JSONNormalize(v))}, "tool_calls_count", `write "tool_calls_count": 2`)
	}
	if v, ok := e["tool_calls"]; ok {
		calls, isList := config.JSONNormalize(v).([]any)
		if !isList {
			probs = append(probs, config.Problem{Field: "tool_calls", Hint: `write "tool_calls": [{"tool_name": "f", "params": {...}}]`, Msg: "tool_calls must be a list of calls"})
		}
		for k, call := range calls {
			m, _ := call.(map[string]any)
			cn, _ := m["tool_name"].(string)
			c := check.Check{Type: "tool-call", Name: cn}
			if params, ok := m["params"].(map[string]any); ok && len(params) > 0 {
				c.Args = params
			}
			add(c, config.IndexPath("tool_calls", k), `each call is {"tool_name": "f", "params": {...}}`)
		}
	}
	if v := str("response_type"); v != "" {
		add(check.Check{Type: "response-type", Value: v}, "response_type", `response_type is "text", "tool_call" or "json"`)
	}
	if v := str("response_contains"); v != "" {
		add(check.Check{Type: "contains", Value: v}, "response_contains", "")
	}
	switch v := e["no_tool_call"].(type) {
	case bool:
		if v {
			add(check.Check{Type: "no-tool-call"}, "no_tool_call", "")
		}
	case nil:
	default:
		probs = append(probs, config.Problem{Field: "no_tool_call", Hint: `write "no_tool_call": true`, Msg: "no_tool_call must be true or false"})
	}
	for _, k := range slices.Sorted(maps.Keys(e)) {
		if !slices.Contains(expectedKeys, k) {
			n.Add(fmt.Sprintf("expected key %q is not a check: the judge reads it with the rest of the expected block", k), id)
		}
	}
	return out, probs
}

var (
	expectedKeys = []string{
		"tool_name", "params", "params_not", "tool_name_not", "tool_name_any", "params_enum_valid", "params_any",
		"params_required", "params_types", "params_structure", "params_pattern", "tool_calls_count", "tool_calls",
		"response_type", "response_contains", "no_tool_call", "match_mode",
	}
	matchModes = []string{
		"exact", "contains", "exclusion", "exact_with_enum", "structure", "required_present", "text_only",
		"valid_choice", "exact_with_pattern", "type_strict", "parallel", "first_step",
	}
)

// splitStrings parts params into its other values (matched exactly by
// tool-call) and its strings (which a "contains" match finds inside the
// argument, by tool-args-contains).
func splitStrings(params map[string]any) (others, texts map[string]any) {
	others, texts = map[string]any{}, map[string]any{}
	for k, v := range params {
		if _, ok := v.(string); ok {
			texts[k] = v
		} else {
			others[k] = v
		}
	}
	return others, texts
}
