package promptfoo

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"pitwall/config"
	"pitwall/edges/jsassert"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// pfContext is what an assertion of one test sees: the test's vars, its
// rendered prompt and the test itself (for javascript's context).
type pfContext struct {
	base   *pfBase
	vars   map[string]any
	prompt string
	id     string
	test   map[string]any
}

// pfMapped is what one assertion becomes.
type pfMapped struct {
	checks    []check.Check
	criteria  string
	reference string
}

// assertion maps one promptfoo assertion, by type ("not-" inverts any of
// those that have a check):
//
//	equals, contains, icontains, starts-with   the same checks (an object
//	                       value of equals is JSON the reply must equal)
//	regex                  regex when Go's RE2 reads the pattern, else a
//	                       javascript check running it as JavaScript does
//	contains-any, -all, icontains-any, -all   the same checks (a string value
//	                       is a comma-separated list, as in promptfoo)
//	is-json, contains-json with a value, against it as a JSON Schema
//	levenshtein            levenshtein (threshold: edits, default 5)
//	latency                max-latency (threshold in ms)
//	is-valid-openai-tools-call, is-valid-openai-function-call,
//	is-valid-function-call valid-tool-calls, against the test's tools
//	is-refusal             not-not-refusal (not-is-refusal: not-refusal)
//	javascript             javascript, inline or file:// (see package script)
//	llm-rubric, model-graded-closedqa, g-eval   the judge's criteria
//	factuality, model-graded-factuality         the judge's reference
//	assert-set             its members, each on its own
//
// An assertion's transform runs before its check reads the reply (see
// judge/check's transform.go), after the test's options.transform.
// Everything else (python, similar, answer-relevance, cost, …), an
// assertion with weight 0 (a metric that never fails a test), and one whose
// transform pitwall cannot run (Python) is noted and not checked.
func (c *pfContext) assertion(a pfAssert, field string) pfMapped {
	n := c.base.n
	typ := strings.ToLower(strings.TrimSpace(a.Type))
	baseType, not := strings.CutPrefix(typ, "not-")
	skip := func(why string) pfMapped {
		n.Add(fmt.Sprintf("%q assertion not checked: %s", typ, why), c.id)
		return pfMapped{}
	}
	if a.Weight != nil && *a.Weight == 0 {
		return skip("weight 0 makes it a metric that never fails a test")
	}
	var own map[string]any
	if a.Transform != nil {
		var ok bool
		if own, ok = c.base.transformSpec(a.Transform, map[string]any{"vars": config.JSONNormalize(c.vars), "prompt": map[string]any{"label": c.prompt}}, c.id, config.JoinPath(field, "transform")); !ok {
			return skip("its transform cannot be run")
		}
	}
	m := c.mapAssertion(a, field, typ, baseType, not, skip)
	if own != nil {
		for i := range m.checks {
			addTransform(&m.checks[i], own)
		}
		if m.criteria != "" || m.reference != "" {
			n.Add("an assertion's transform is not applied to what the judge grades", c.id)
		}
	}
	return m
}

// mapAssertion is assertion without the assertion's own transform.
func (c *pfContext) mapAssertion(a pfAssert, field, typ, baseType string, not bool, skip func(string) pfMapped) pfMapped {
	n := c.base.n
	neg := func(t string) string {
		if not {
			return "not-" + t
		}
		return t
	}
	if s, ok := a.Value.(string); ok && strings.HasPrefix(strings.TrimSpace(s), "file://") && baseType != "javascript" {
		return skip("values read from file:// are supported for javascript only")
	}
	val := pfRender(config.ValueText(a.Value), c.vars)
	one := func(ch check.Check) pfMapped { return c.keep(ch, field) }
	switch baseType {
	case "equals":
		if obj, ok := a.Value.(map[string]any); ok {
			return one(pf(check.Check{Type: neg("json-schema"), Schema: map[string]any{"const": config.JSONNormalize(obj)}}))
		}
		return one(pf(check.Check{Type: neg("equals"), Value: val}))
	case "contains", "icontains", "starts-with":
		return one(pf(check.Check{Type: neg(baseType), Value: val}))
	case "regex":
		// promptfoo runs the pattern as a JavaScript RegExp. One that RE2
		// cannot read but JavaScript can (lookahead, lookbehind,
		// backreferences, \k<name>) runs as JavaScript; one neither reads
		// stays a regex check, which validation reports with its test.
		// A pattern JavaScript refuses ((?i), say, which RE2 reads) fails
		// there: the script below throws, and the check fails in both forms.
		if _, err := regexp.Compile(val); err != nil && !jsRegExp(val) || err == nil && jsRegExp(val) {
			return one(pf(check.Check{Type: neg("regex"), Value: val}))
		}
		return one(c.script(neg("javascript"), fmt.Sprintf("new RegExp(%s).test(typeof output === 'string' ? output : JSON.stringify(output))", jsString(val)), a))
	case "contains-any", "icontains-any", "contains-all", "icontains-all":
		values := c.listValue(a.Value)
		return one(pf(check.Check{Type: neg(baseType), Args: map[string]any{"values": values}}))
	case "is-json", "contains-json":
		ch := pf(check.Check{Type: neg(baseType)})
		if a.Value != nil {
			schema := config.JSONNormalize(a.Value)
			if s, ok := a.Value.(string); ok {
				if err := json.Unmarshal([]byte(pfRender(s, c.vars)), &schema); err != nil {
					return skip("its schema is text that is not JSON")
				}
			}
			ch.Schema = schema
			if baseType == "is-json" {
				ch.Type = neg("json-schema")
			}
		}
		return one(ch)
	case "levenshtein":
		args := map[string]any{}
		if a.Threshold != nil {
			args["threshold"] = *a.Threshold
		}
		return one(pf(check.Check{Type: neg("levenshtein"), Value: val, Args: args}))
	case "latency":
		if not || a.Threshold == nil {
			return skip("latency needs a threshold, and has no not- form")
		}
		return one(check.Check{Type: "max-latency", Value: fmt.Sprintf("%gms", *a.Threshold)})
	case "is-valid-openai-tools-call", "is-valid-openai-function-call", "is-valid-function-call":
		return one(check.Check{Type: neg("valid-tool-calls")})
	case "is-refusal":
		if not {
			return one(pf(check.Check{Type: "not-refusal"}))
		}
		return one(pf(check.Check{Type: "not-not-refusal"}))
	case "javascript":
		return c.javascript(a, not, field)
	case "llm-rubric", "model-graded-closedqa", "g-eval":
		if not || val == "" {
			return skip("a rubric needs a value, and has no not- form")
		}
		if a.Provider != nil {
			n.Add("an assertion's own grading provider is not used: pitwall's judges grade", c.id)
		}
		return pfMapped{criteria: val}
	case "factuality", "model-graded-factuality":
		if not || val == "" {
			return skip("factuality needs a value, and has no not- form")
		}
		return pfMapped{reference: val}
	case "assert-set":
		if not {
			return skip("a not- assert-set has no meaning as separate checks")
		}
		if a.Threshold != nil {
			n.Add("an assert-set's threshold is not applied: each of its assertions must pass", c.id)
		}
		var out pfMapped
		for k, member := range a.Assert {
			m := c.assertion(member, config.Under(field, config.IndexPath("assert", k)))
			out.checks = append(out.checks, m.checks...)
			out.criteria = strings.TrimSpace(out.criteria + "\n" + m.criteria)
			if m.reference != "" {
				out.reference = m.reference
			}
		}
		return out
	case "python", "ruby", "webhook":
		return skip("pitwall runs JavaScript assertions only")
	}
	return skip("pitwall has no equivalent")
}

// pf marks a check to read the reply as promptfoo's assertions do (see
// judge/check's promptfooReply): tool calls as their JSON, nothing trimmed.
func pf(ch check.Check) check.Check {
	if ch.Args == nil {
		ch.Args = map[string]any{}
	}
	ch.Args["output"] = "promptfoo"
	return ch
}

// keep validates a check and keeps it, or reports it at field.
func (c *pfContext) keep(ch check.Check, field string) pfMapped {
	if strings.HasSuffix(ch.Type, "valid-tool-calls") {
		// Its tools come from the test, after mapping (see complete).
		return pfMapped{checks: []check.Check{ch}}
	}
	if err := check.ValidateCheck(ch); err != nil {
		if strings.HasSuffix(ch.Type, "javascript") {
			// promptfoo fails the one assertion whose script is broken and
			// runs the rest; so does the check, invalid in both forms.
			// The script that stands in throws the compiler's message.
			c.base.n.Add(fmt.Sprintf("a javascript assertion fails as it is: %v", err), c.id)
			ch.Value = "throw new SyntaxError(" + jsString(err.Error()) + ")"
			delete(ch.Args, "module")
			delete(ch.Args, "function")
			return pfMapped{checks: []check.Check{ch}}
		}
		c.base.col.Add(field, "", "test %q: %s", c.id, err)
		return pfMapped{}
	}
	return pfMapped{checks: []check.Check{ch}}
}

// javascript maps a javascript assertion: inline code, rendered with the
// vars as promptfoo renders it, or a file:// script beside the config.
func (c *pfContext) javascript(a pfAssert, not bool, field string) pfMapped {
	typ := "javascript"
	if not {
		typ = "not-javascript"
	}
	raw, ok := a.Value.(string)
	if !ok || strings.TrimSpace(raw) == "" {
		c.base.col.Add(config.JoinPath(field, "value"), "write the code, or file://path.js", "test %q: javascript assertion without code", c.id)
		return pfMapped{}
	}
	ch := c.script(typ, "", a)
	if ref, isFile := strings.CutPrefix(strings.TrimSpace(raw), "file://"); isFile {
		file, fn := ref, ""
		if i := strings.LastIndexByte(ref, ':'); i > 0 && !strings.ContainsAny(ref[i+1:], "/\\") {
			file, fn = ref[:i], ref[i+1:]
		}
		switch strings.ToLower(filepath.Ext(file)) {
		case ".js", ".cjs", ".mjs":
		default:
			c.base.n.Add(fmt.Sprintf("%q assertion not checked: file://%s is not a JavaScript file", typ, ref), c.id)
			return pfMapped{}
		}
		data, _, err := pfFile(c.base.file, file)
		if err != nil {
			c.base.col.Add(config.JoinPath(field, "value"), "the path is relative to the promptfoo config", "test %q: %v", c.id, err)
			return pfMapped{}
		}
		ch.Value = string(data)
		ch.Args["module"] = true
		ch.Args["file"] = file
		if fn != "" {
			ch.Args["function"] = fn
		}
	} else {
		ch.Value = pfRender(raw, c.vars)
	}
	return c.keep(ch, config.JoinPath(field, "value"))
}

// script is a javascript check with code and the context promptfoo gives.
func (c *pfContext) script(typ, code string, a pfAssert) check.Check {
	args := map[string]any{"vars": config.JSONNormalize(c.vars), "prompt": c.prompt, "test": config.JSONNormalize(c.test)}
	if a.Threshold != nil {
		args["threshold"] = *a.Threshold
	}
	if a.Config != nil {
		args["config"] = config.JSONNormalize(a.Config)
	}
	return check.Check{Type: typ, Value: code, Args: args}
}

// listValue reads a contains-any/all value: a list, or a comma-separated
// string (quotes keep commas inside a value), each rendered with the vars.
func (c *pfContext) listValue(v any) []any {
	var items []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			items = append(items, config.ValueText(e))
		}
	case string:
		items = splitCommas(x)
	case nil:
	default:
		items = []string{config.ValueText(x)}
	}
	out := make([]any, 0, len(items))
	for _, s := range items {
		out = append(out, pfRender(s, c.vars))
	}
	return out
}

// splitCommas splits "a, b, \"c, d\"" into a, b and c, d.
func splitCommas(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	if t := strings.TrimSpace(cur.String()); t != "" || len(out) > 0 {
		out = append(out, t)
	}
	return out
}

// jsRegExp reports whether JavaScript reads pattern as a RegExp: asked of
// the engine that runs the javascript check, rather than guessed from why
// RE2 refused it.
func jsRegExp(pattern string) bool {
	p, err := jsassert.Compile("new RegExp("+jsString(pattern)+") instanceof RegExp", false, "")
	if err != nil {
		return false
	}
	r, err := p.Run(jsassert.Input{Output: ""}, nil)
	return err == nil && r.Pass
}

// jsString writes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chatMessages reads a rendered prompt that is a JSON list of chat
// messages, as promptfoo allows.
func chatMessages(s string) ([]chat.Message, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var list []any
	if err := json.Unmarshal([]byte(s), &list); err != nil || len(list) == 0 {
		return nil, false
	}
	msgs, probs, ok := config.DecodeMessages(list)
	if !ok || len(probs) > 0 {
		return nil, false
	}
	for _, m := range msgs {
		if m.Role == "" {
			return nil, false
		}
	}
	return msgs, true
}

func firstString(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
}
