package bfcl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"pitwall/config"
	"pitwall/judge/check"
)

// prompt-prix writes its own batteries in BFCL's shape too (its
// tool_competence_tests_bfcl.jsonl), with a ground truth of its own and
// keys BFCL has not:
//
//	ground_truth                  [{"name": f, "arguments": {...}}]: a call to
//	                              each; an argument "*" is any value (present,
//	                              not null), a list is the values allowed, any
//	                              other value is the value (objects as subsets,
//	                              strings ignoring case, as tool-call matches);
//	                              [] is no call at all
//	ground_truth_exclude          names, or {"name", "arguments"}: no such call
//	ground_truth_first_call_only  the ground truth is the first call's
//	ground_truth_type_strict      {"arg": "number"}: the argument's type
//	expected_call_count           that many calls (otherwise the ground
//	                              truth's number)
//	expected_response_contains    the answer contains it
//	tool_choice                   validates the reply; not sent (prompt-prix
//	                              sends none)
//
// prompt-prix itself drops the ground truth when it loads such a file (it
// scores only refusals and tool_choice); pitwall checks it, which is
// stricter. Such a line is a prompt-prix test (config.DialectPromptPrix),
// its severity "warning" when it gives none.
var promptPrixKeys = []string{
	"ground_truth_exclude", "ground_truth_first_call_only", "ground_truth_type_strict",
	"expected_call_count", "expected_response_contains", "tool_choice",
}

// isPromptPrix reports whether an entry is prompt-prix's: a key of its
// own, or a ground truth of {"name", "arguments"} calls.
func isPromptPrix(m map[string]any) bool {
	for _, k := range promptPrixKeys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	gt, _ := config.JSONNormalize(m["ground_truth"]).([]any)
	for _, e := range gt {
		if call, ok := e.(map[string]any); ok {
			if _, named := call["name"].(string); named {
				return true
			}
		}
	}
	return false
}

// promptPrixChecks reads a prompt-prix entry's ground truth and the keys
// around it as checks.
func promptPrixChecks(m map[string]any) ([]check.Check, []config.Problem) {
	var out []check.Check
	var probs []config.Problem
	add := func(c check.Check, field, hint string) { checked(c, field, hint, &out, &probs) }
	firstOnly, _ := m["ground_truth_first_call_only"].(bool)
	gt, isList := config.JSONNormalize(m["ground_truth"]).([]any)
	if _, ok := m["ground_truth"]; ok && !isList {
		probs = append(probs, config.Problem{Field: "ground_truth", Hint: `write "ground_truth": [{"name": "f", "arguments": {"arg": "value"}}]`,
			Msg: "ground_truth must be a list of calls"})
	}
	if n, ok := m["expected_call_count"]; ok {
		add(check.Check{Type: "tool-call-count", Value: config.ValueText(config.JSONNormalize(n))}, "expected_call_count", `write "expected_call_count": 2`)
	} else if isList && len(gt) == 0 {
		add(check.Check{Type: "no-tool-call"}, "ground_truth", "")
	} else if isList && !firstOnly {
		add(check.Check{Type: "tool-call-count", Value: fmt.Sprint(len(gt))}, "ground_truth", "")
	}
	for i, e := range gt {
		field := config.IndexPath("ground_truth", i)
		call, _ := e.(map[string]any)
		name, _ := call["name"].(string)
		args, argsOK := call["arguments"].(map[string]any)
		if name == "" || (call["arguments"] != nil && !argsOK) {
			probs = append(probs, config.Problem{Field: field, Hint: `each call is {"name": "f", "arguments": {"arg": "value"}}`,
				Msg: "a ground-truth call needs a name and an arguments object"})
			continue
		}
		exact, wild, enums := splitArguments(args)
		c := check.Check{Type: "tool-call", Name: name}
		if firstOnly && i == 0 {
			c.Type = "first-tool-call"
		}
		if len(exact) > 0 {
			c.Args = exact
		}
		add(c, field, "")
		if len(wild) > 0 {
			add(check.Check{Type: "tool-args-required", Name: name, Args: map[string]any{"params": wild}}, field, "")
		}
		if len(enums) > 0 {
			add(check.Check{Type: "tool-args-enum", Name: name, Args: enums}, field, "")
		}
	}
	if v, ok := m["ground_truth_exclude"]; ok {
		list, _ := config.JSONNormalize(v).([]any)
		if list == nil {
			probs = append(probs, config.Problem{Field: "ground_truth_exclude", Hint: `write "ground_truth_exclude": ["execute_code"]`,
				Msg: "ground_truth_exclude must be a list of tool names or calls"})
		}
		for i, e := range list {
			c := check.Check{Type: "not-tool-call"}
			switch x := e.(type) {
			case string:
				c.Name = x
			case map[string]any:
				c.Name, _ = x["name"].(string)
				if a, ok := x["arguments"].(map[string]any); ok && len(a) > 0 {
					c.Args = a
				}
			}
			add(c, config.IndexPath("ground_truth_exclude", i), `each entry is "name" or {"name": "f", "arguments": {...}}`)
		}
	}
	if v, ok := m["ground_truth_type_strict"]; ok {
		types, _ := config.JSONNormalize(v).(map[string]any)
		add(check.Check{Type: "tool-args-types", Args: types}, "ground_truth_type_strict", `write "ground_truth_type_strict": {"amount": "number"}`)
	}
	if s, ok := m["expected_response_contains"].(string); ok && strings.TrimSpace(s) != "" {
		add(check.Check{Type: "contains", Value: s}, "expected_response_contains", "")
	}
	return out, probs
}

// splitArguments parts a ground-truth call's arguments into the values
// matched as written ("*" dropped from objects within), the arguments that
// may have any value ("*") and those with a list of allowed values.
func splitArguments(args map[string]any) (exact map[string]any, wild []any, enums map[string]any) {
	exact, enums = map[string]any{}, map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		switch v := args[k].(type) {
		case string:
			if v == "*" {
				wild = append(wild, k)
				continue
			}
			exact[k] = v
		case []any:
			enums[k] = v
		case map[string]any:
			wild = append(wild, k)
			if inner := withoutWildcards(v); len(inner) > 0 {
				exact[k] = inner
			}
		default:
			exact[k] = v
		}
	}
	return exact, wild, enums
}

func withoutWildcards(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch x := v.(type) {
		case string:
			if x != "*" {
				out[k] = x
			}
		case map[string]any:
			if inner := withoutWildcards(x); len(inner) > 0 {
				out[k] = inner
			}
		default:
			out[k] = v
		}
	}
	return out
}
