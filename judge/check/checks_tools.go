package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
	"slices"
	"strconv"
	"strings"
)

// The checks that read the reply's tool calls.

func runToolCall(c Check, r reply) (bool, string, error) {
	want, err := plain(c.Args)
	if err != nil {
		return false, "", fmt.Errorf("args: %w", err)
	}
	if len(r.ToolCalls) == 0 {
		return false, "no tool call; reply was " + quote(strings.TrimSpace(r.answer), 60), nil
	}
	name := strings.TrimSpace(c.Name)
	mismatch := ""
	for _, call := range r.ToolCalls {
		if call.Name != name {
			continue
		}
		if want == nil {
			return true, "called " + callText(call, 80), nil
		}
		got, err := callArgs(call)
		if err != nil {
			if mismatch == "" {
				mismatch = fmt.Sprintf("%s arguments are not JSON: %s", name, quote(call.Arguments, 60))
			}
			continue
		}
		if why := argsMatch(want, got, ""); why != "" {
			if mismatch == "" {
				mismatch = fmt.Sprintf("%s: %s", callText(call, 60), why)
			}
			continue
		}
		return true, "called " + callText(call, 80), nil
	}
	if mismatch != "" {
		return false, mismatch, nil
	}
	return false, "called " + callsText(r.ToolCalls), nil
}

func runNoToolCall(_ Check, r reply) (bool, string, error) {
	if len(r.ToolCalls) == 0 {
		return true, "no tool call", nil
	}
	return false, "called " + callsText(r.ToolCalls), nil
}

// callArgs decodes a call's arguments; servers send "" for a call without
// arguments, which is read as {}.
func callArgs(call chat.ToolCall) (any, error) {
	if strings.TrimSpace(call.Arguments) == "" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal([]byte(call.Arguments), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// argsMatch reports why got does not contain want, or "" when it does.
// Objects match when every key of want is in got with a matching value (got
// may have more keys); arrays match element by element and in order; numbers
// match when equal as numbers (1 and 1.0, within a relative 1e-9); strings
// match ignoring case and surrounding whitespace ("Tokyo" and "tokyo "),
// because models vary the case of free-text arguments and a test that cares
// can use a regex on the reply; booleans and null match exactly.
func argsMatch(want, got any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %s", pathOr(at), describe(got))
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: missing", at+pathKey(k))
			}
			if why := argsMatch(w[k], gv, at+pathKey(k)); why != "" {
				return why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: want an array, got %s", pathOr(at), describe(got))
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s: want %d items, got %d", pathOr(at), len(w), len(g))
		}
		for i := range w {
			if why := argsMatch(w[i], g[i], at+"["+strconv.Itoa(i)+"]"); why != "" {
				return why
			}
		}
		return ""
	case float64:
		if g, ok := got.(float64); ok && numbersEqual(w, g) {
			return ""
		}
	case string:
		if g, ok := got.(string); ok && strings.EqualFold(strings.TrimSpace(w), strings.TrimSpace(g)) {
			return ""
		}
	default:
		if jsonEqual(want, got) {
			return ""
		}
	}
	return fmt.Sprintf("%s: want %s, got %s", pathOr(at), describe(want), describe(got))
}

func numbersEqual(a, b float64) bool {
	scale := math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
	return math.Abs(a-b) <= 1e-9*scale
}

func pathOr(at string) string {
	if at == "" {
		return "arguments"
	}
	return strings.TrimPrefix(at, ".")
}

// callText shows one call as name({"a":1}), arguments compacted and clipped.
func callText(call chat.ToolCall, n int) string {
	return call.Name + "(" + textutil.Clip(textutil.CompactJSON(call.Arguments), n) + ")"
}

func callsText(calls []chat.ToolCall) string {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		parts = append(parts, callText(c, 40))
	}
	return strings.Join(parts, ", ")
}
