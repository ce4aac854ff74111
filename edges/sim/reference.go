package sim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// expectation is what a judge prompt's reference asks of the candidate.
// References come in the shapes batteries write them: tool calls as the
// judge renders them ("[tool call] f({...})"), bare calls ("f({...})"),
// prompt-prix's expected block ("Expected: {"tool_name": ...}"), or text
// the answer must contain.
type expectation struct {
	calls  []renderedCall // each must be made, with at least these arguments
	anyOf  []string       // one of these functions must be called
	notOf  []string       // none of these may be called
	text   string         // the answer's text must contain this
	noCall bool           // no function may be called
	// value is a reference that is JSON: the answer must hold JSON equal
	// to it by value (key order and spacing aside; an object may carry
	// more keys than the reference names).
	value  any
	isJSON bool
}

// renderedCall is one tool call read from a judge prompt.
type renderedCall struct {
	name string
	args map[string]any
	ok   bool // args parsed as a JSON object
}

var (
	// toolLine is a tool call as the judge package renders it.
	toolLine = regexp.MustCompile(`(?m)^\s*\[tool call\]\s*([^\s(]+)\((.*)\)\s*$`)
	// bareCall is a line that is only a call expression, f({...}).
	bareCall = regexp.MustCompile(`(?m)^\s*([A-Za-z_][\w.\-]*)\((\{.*\})\)\s*$`)
)

func parseCalls(re *regexp.Regexp, s string) []renderedCall {
	var out []renderedCall
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		c := renderedCall{name: m[1]}
		c.ok = json.Unmarshal([]byte(m[2]), &c.args) == nil
		out = append(out, c)
	}
	return out
}

// parseExpectation reads a reference; false when there is none ("(none)"
// or empty).
func parseExpectation(ref string) (expectation, bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" || ref == "(none)" {
		return expectation{}, false
	}
	if calls := parseCalls(toolLine, ref); len(calls) > 0 {
		return expectation{calls: calls}, true
	}
	if e, ok := expectedBlock(ref); ok {
		return e, true
	}
	if calls := parseCalls(bareCall, ref); len(calls) > 0 {
		return expectation{calls: calls}, true
	}
	var v any
	if (strings.HasPrefix(ref, "{") || strings.HasPrefix(ref, "[")) && json.Unmarshal([]byte(ref), &v) == nil {
		return expectation{value: v, isJSON: true}, true
	}
	return expectation{text: ref}, true
}

// jsonIn reads the JSON a candidate holds: all of it, or what a code fence
// or prose leaves between its first "{" or "[" and the last "}" or "]".
func jsonIn(s string) (any, bool) {
	var v any
	s = strings.TrimSpace(s)
	if json.Unmarshal([]byte(s), &v) == nil {
		return v, true
	}
	i := strings.IndexAny(s, "{[")
	j := strings.LastIndexAny(s, "}]")
	if i < 0 || j < i {
		return nil, false
	}
	if json.Unmarshal([]byte(s[i:j+1]), &v) == nil {
		return v, true
	}
	return nil, false
}

// sameJSON compares by value: numbers as numbers, objects by key (got may
// have more), arrays in order.
func sameJSON(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !sameJSON(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameJSON(w[i], g[i]) {
				return false
			}
		}
		return true
	case string:
		g, ok := got.(string)
		return ok && strings.EqualFold(strings.TrimSpace(g), strings.TrimSpace(w))
	}
	return want == got
}

// expectedBlock reads prompt-prix's expected object, the JSON between the
// reference's first "{" and last "}".
func expectedBlock(ref string) (expectation, bool) {
	i, j := strings.Index(ref, "{"), strings.LastIndex(ref, "}")
	if i < 0 || j < i {
		return expectation{}, false
	}
	var m map[string]any
	if json.Unmarshal([]byte(ref[i:j+1]), &m) != nil {
		return expectation{}, false
	}
	var e expectation
	known := false
	call := func(o map[string]any) {
		if name, _ := o["tool_name"].(string); name != "" {
			args, _ := o["params"].(map[string]any)
			e.calls = append(e.calls, renderedCall{name: name, args: args, ok: true})
			known = true
		}
	}
	call(m)
	if list, ok := m["tool_calls"].([]any); ok {
		for _, c := range list {
			if o, ok := c.(map[string]any); ok {
				call(o)
			}
		}
	}
	for key, dst := range map[string]*[]string{"tool_name_any": &e.anyOf, "tool_name_not": &e.notOf} {
		switch v := m[key].(type) {
		case string:
			*dst, known = append(*dst, v), true
		case []any:
			for _, n := range v {
				if s, ok := n.(string); ok {
					*dst, known = append(*dst, s), true
				}
			}
		}
	}
	if s, ok := m["response_contains"].(string); ok && s != "" {
		e.text, known = s, true
	}
	if b, _ := m["no_tool_call"].(bool); b {
		e.noCall, known = true, true
	}
	return e, known
}

// meets checks a candidate, as the judge package renders it (text, then a
// "[tool call]" line per call), against e, and says what it saw.
func (e expectation) meets(candidate string) (bool, string) {
	got := parseCalls(toolLine, candidate)
	text := toolLine.ReplaceAllString(candidate, "")
	for _, w := range e.calls {
		if !hasCall(got, w) {
			if len(got) == 0 {
				return false, fmt.Sprintf("The candidate makes no call to %s.", w.name)
			}
			return false, fmt.Sprintf("The candidate does not call %s with the expected arguments.", w.name)
		}
	}
	if len(e.anyOf) > 0 && !slices.ContainsFunc(got, func(c renderedCall) bool { return slices.Contains(e.anyOf, c.name) }) {
		return false, fmt.Sprintf("The candidate calls none of %s.", strings.Join(e.anyOf, ", "))
	}
	for _, c := range got {
		if slices.Contains(e.notOf, c.name) {
			return false, fmt.Sprintf("The candidate calls %s, which it must not.", c.name)
		}
	}
	if e.noCall && len(got) > 0 {
		return false, "The candidate calls a tool where none was needed."
	}
	if e.isJSON {
		v, ok := jsonIn(text)
		switch {
		case !ok:
			return false, "The candidate output is not valid JSON."
		case !sameJSON(e.value, v):
			return false, "The candidate's JSON differs from the reference's values."
		}
		return true, "The candidate's JSON holds the reference's values."
	}
	if e.text != "" && !containsNorm(text, e.text) {
		return false, "The candidate output does not contain the reference answer."
	}
	switch {
	case len(e.calls) > 0 || len(e.anyOf) > 0:
		return true, "The candidate makes the expected tool call with the expected arguments."
	case e.text != "":
		return true, "The candidate output contains the reference answer."
	}
	return true, "The candidate does what the reference expects."
}

// hasCall reports whether got holds a call to w's function whose arguments
// include every argument of w.
func hasCall(got []renderedCall, w renderedCall) bool {
	for _, g := range got {
		if g.name != w.name || !g.ok {
			continue
		}
		match := true
		for k, v := range w.args {
			if !reflect.DeepEqual(g.args[k], v) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
