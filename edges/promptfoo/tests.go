package promptfoo

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"pitwall/config"
	"pitwall/edges/jsassert"
	"pitwall/judge/check"
)

// pfBase is what every test of a promptfoo config shares.
type pfBase struct {
	file     config.File // the config, whose ReadRef reads its file:// references
	n        *config.Notes
	col      *config.Collector
	prompts  []pfPrompt
	def      pfTest
	provider *pfRequest // the config's provider's request fields
	defReq   *pfRequest // defaultTest's options.provider's, in a prompt-prix battery
	// defProvider is defaultTest's own provider, which a test without one
	// runs on.
	defProvider any
	// promptPrix is set for prompt-prix's batteries (promptPrixShape).
	promptPrix bool
}

// maxVarCombinations bounds the tests one promptfoo test may expand into
// through list-valued vars.
const maxVarCombinations = 1000

// expand turns one promptfoo test into pitwall tests: one per combination
// of its list-valued vars, times one per prompt.
func (b *pfBase) expand(pt pfTest, i int, at string) []config.Test {
	vars := map[string]any{}
	for _, src := range []any{b.def.Vars, pt.Vars} {
		m, ok := src.(map[string]any)
		if !ok && src != nil {
			b.col.Add(config.JoinPath(at, "vars"), "vars is a table of names and values", "vars must be a table, got %s", config.Describe(src, "json"))
			return nil
		}
		for k, v := range m {
			vars[k] = v
		}
	}
	b.readVarFiles(vars, at)
	combos, err := varCombinations(vars)
	if err == nil && len(combos)*len(b.prompts) > maxExpandedTests {
		err = fmt.Errorf("its %d prompts × %d combinations of list-valued vars make more than %d tests", len(b.prompts), len(combos), maxExpandedTests)
	}
	if err != nil {
		b.col.Add(config.JoinPath(at, "vars"), "split the test, or shorten its lists", "%v", err)
		return nil
	}
	meta := map[string]any{}
	for _, m := range []map[string]any{b.def.Metadata, pt.Metadata} {
		for k, v := range m {
			meta[k] = v
		}
	}
	asserts := append(append([]pfAssert(nil), b.def.Assert...), pt.Assert...)
	baseID := firstString(meta["test_id"], vars["test_id"], vars["id"], meta["id"])
	if baseID == "" {
		baseID = slug(pt.Description)
	}
	if baseID == "" {
		baseID = fmt.Sprintf("test-%d", i+1)
	}
	reqs := b.requests(pt, at, baseID)
	var out []config.Test
	for k, vs := range combos {
		id := baseID
		if len(combos) > 1 {
			id = fmt.Sprintf("%s#%d", baseID, k+1)
		}
		pfRunNotes(b.n, pt, id)
		for _, p := range b.prompts {
			t := b.test(pt, vs, meta, p, id, asserts, at)
			pfApplyRequest(&t, reqs...)
			if b.promptPrix {
				t.Dialect = config.DialectPromptPrix
			}
			out = append(out, t)
		}
	}
	return out
}

// test builds the pitwall test for one combination of vars and one prompt.
func (b *pfBase) test(pt pfTest, vars, meta map[string]any, p pfPrompt, id string, asserts []pfAssert, at string) config.Test {
	t := config.Test{Name: pt.Description, ID: id}
	if len(b.prompts) > 1 {
		t.ID += "/" + p.id
	}
	t.Category = firstString(meta["category"], vars["category"])
	t.Severity = strings.ToLower(firstString(meta["severity"], vars["severity"]))
	t.Expect = strings.ToUpper(firstString(vars["expected_verdict"], meta["expected_verdict"], vars["expect"]))
	prompt := b.render(p.text, vars, id)
	if msgs, ok := chatMessages(prompt); ok {
		t.Messages = msgs
	} else {
		t.User = strings.TrimRight(prompt, "\n")
	}
	ctx := pfContext{base: b, vars: vars, prompt: prompt, id: t.ID,
		test: map[string]any{"description": pt.Description, "vars": vars, "metadata": meta}}
	var testTransform map[string]any
	if tr, field := b.testTransform(pt, at); tr != nil {
		ctx := map[string]any{"vars": config.JSONNormalize(vars), "prompt": map[string]any{"raw": prompt, "label": p.id}}
		var ok bool
		if testTransform, ok = b.transformSpec(tr, ctx, t.ID, field); !ok {
			b.n.Add("options.transform is not applied: assertions read the reply as the model wrote it", t.ID)
		}
	}
	var criteria []string
	for k, a := range asserts {
		field := config.Under(at, config.IndexPath("assert", k))
		if k < len(b.def.Assert) {
			field = config.IndexPath("defaultTest.assert", k)
		}
		m := ctx.assertion(a, field)
		if testTransform != nil {
			for i := range m.checks {
				prependTransform(&m.checks[i], testTransform)
			}
			if m.criteria != "" || m.reference != "" {
				b.n.Add("options.transform is not applied to what the judge grades: it grades the reply as the model wrote it", t.ID)
			}
		}
		t.Checks = append(t.Checks, m.checks...)
		if m.criteria != "" {
			criteria = append(criteria, m.criteria)
		}
		if m.reference != "" {
			t.Reference = m.reference
		}
	}
	t.Criteria = strings.Join(criteria, "\n")
	if t.Reference == "" {
		t.Reference = firstString(vars["expected_response"])
	}
	return t
}

// requests are the provider configs whose tools, tool_choice and
// response_format shape a test's request, least specific first.
//
// promptfoo runs a test that names its own provider (or whose defaultTest
// does) on that provider in place of each of the config's: the request is
// that provider's alone, and a provider named by its id alone has no
// tools. pitwall cannot run a provider of promptfoo's; it runs the test on
// every model of its config, with that provider's request, and says so.
//
// options.provider is the grader of promptfoo's model-graded assertions:
// promptfoo sends none of its config to the model (e2e/promptfoo checks
// it on the wire). prompt-prix's batteries put the model's tools there, as
// the JSON twin of each offers them; in those, pitwall offers them and
// warns, rather than running tool tests with no tools.
func (b *pfBase) requests(pt pfTest, at, id string) []*pfRequest {
	reqs := []*pfRequest{b.provider}
	if own, field := pt.Provider, config.JoinPath(at, "provider"); own != nil || b.defProvider != nil {
		if own == nil {
			own, field = b.defProvider, "defaultTest.provider"
		}
		b.n.Add("a test's own provider (promptfoo runs the test on it in place of the config's providers) is not run: "+
			"pitwall runs the test on every model of its config, sending that provider's tools, tool_choice and response_format", id)
		req := pfProviderRequest(b.col, b.n, own, field)
		if req == nil {
			req = &pfRequest{} // an id alone: a provider with no tools
		}
		reqs = []*pfRequest{req}
	}
	opt := pfProviderRequest(b.col, b.n, pt.Options.Provider, config.JoinPath(at, "options.provider"))
	if !b.promptPrix {
		if opt != nil && (opt.Tools != nil || opt.ToolChoice != nil || opt.ResponseFormat != nil) {
			b.n.Add("options.provider configures promptfoo's grader: its tools, tool_choice and response_format are not sent to the model, as promptfoo does not send them", id)
		}
		return reqs
	}
	if opt != nil || b.defReq != nil {
		b.n.Add("prompt-prix's battery (its vars test_id, category and severity): the tools and tool_choice of options.provider are offered to the model, "+
			"where promptfoo sends none of them (it configures its grader there), and tool_choice is validated, not sent, as prompt-prix does", id)
	}
	return append(reqs, b.defReq, opt)
}

// promptPrixShape reports whether a promptfoo config is one of prompt-prix's
// batteries: its top-level metadata says dialect: prompt-prix, or every one
// of its tests has the vars prompt-prix's batteries give each (test_id,
// category and severity).
func promptPrixShape(top map[string]any) bool {
	if meta, ok := top["metadata"].(map[string]any); ok {
		if d, _ := meta["dialect"].(string); d == config.DialectPromptPrix {
			return true
		}
	}
	tests, _ := top["tests"].([]any)
	for _, raw := range tests {
		t, _ := raw.(map[string]any)
		vars, _ := t["vars"].(map[string]any)
		for _, k := range []string{"test_id", "category", "severity"} {
			if s, _ := vars[k].(string); s == "" {
				return false
			}
		}
	}
	return len(tests) > 0
}

// pfRunNotes notes the parts of a test's options that change how promptfoo
// runs it and that pitwall does not apply.
func pfRunNotes(n *config.Notes, pt pfTest, id string) {
	o := pt.Options
	if o.Prefix != nil || o.Suffix != nil {
		n.Add("options.prefix and suffix are not added to the prompt", id)
	}
	if pt.Threshold != nil {
		n.Add("a test's threshold (a minimum share of weighted assertions) is not applied: every check must pass", id)
	}
}

// varCombinations expands list-valued vars into one map per combination,
// in promptfoo's order (the first var varies slowest).
func varCombinations(vars map[string]any) ([]map[string]any, error) {
	combos := []map[string]any{{}}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		values, ok := vars[k].([]any)
		if !ok || len(values) == 0 {
			for _, c := range combos {
				c[k] = vars[k]
			}
			continue
		}
		if len(combos)*len(values) > maxVarCombinations {
			return nil, fmt.Errorf("its list-valued vars make more than %d tests", maxVarCombinations)
		}
		var next []map[string]any
		for _, c := range combos {
			for _, v := range values {
				m := make(map[string]any, len(c)+1)
				for ck, cv := range c {
					m[ck] = cv
				}
				m[k] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	return combos, nil
}

// providersRequest reads the request fields of the config's providers: the
// one provider's, or the first's when several have config (noted, since
// pitwall sends every model the same request).
func providersRequest(col *config.Collector, n *config.Notes, v any) *pfRequest {
	var list []any
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		list = x
	default:
		list = []any{x}
	}
	var first *pfRequest
	withConfig := 0
	for i, p := range list {
		r := pfProviderRequest(col, n, p, config.IndexPath("providers", i))
		if r == nil {
			continue
		}
		withConfig++
		if first == nil {
			first = r
		}
	}
	if withConfig > 1 {
		n.Add("several providers have config: pitwall sends every model the first one's tools, tool_choice and response_format", "")
	}
	n.Add("providers are not run: pitwall runs the models of its own config", "")
	return first
}

// pfProviderRequest reads tools, tool_choice and response_format from a
// provider's config, when the provider is a table; other config keys are
// noted.
func pfProviderRequest(col *config.Collector, n *config.Notes, v any, at string) *pfRequest {
	p, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	cfg, ok := p["config"].(map[string]any)
	if !ok {
		return nil
	}
	var req pfRequest
	b, err := json.Marshal(cfg)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err != nil {
		col.Add(config.JoinPath(at, "config"), "tools, tool_choice and response_format are written as OpenAI's API takes them",
			"tools, tool_choice or response_format is not in OpenAI's shape: %s", config.JSONDecodeError(col.Src.File, b, 0, err).Msg)
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		switch k {
		case "tools", "tool_choice", "response_format":
		default:
			n.Add(fmt.Sprintf("provider config %q is not applied: pitwall's [run] settings shape every request", k), "")
		}
	}
	return &req
}

// pfApplyRequest sets the request fields from the most specific provider
// config that has each: the test's, defaultTest's, the config's.
func pfApplyRequest(t *config.Test, reqs ...*pfRequest) {
	var merged pfRequest
	for _, r := range reqs {
		if r == nil {
			continue
		}
		if r.Tools != nil {
			merged.Tools = r.Tools
		}
		if r.ToolChoice != nil {
			merged.ToolChoice = r.ToolChoice
		}
		if r.ResponseFormat != nil {
			merged.ResponseFormat = r.ResponseFormat
		}
	}
	t.Tools, t.ToolChoice, t.ResponseFormat = config.Request(merged.Tools, merged.ToolChoice, merged.ResponseFormat)
}

// testTransform is the transform promptfoo runs on a test's output before
// its assertions: options.transform, else options.postprocess (its older
// name), the test's over defaultTest's, as promptfoo merges the two.
// field is where it is written, under the test at at.
func (b *pfBase) testTransform(pt pfTest, at string) (v any, field string) {
	for _, c := range []struct {
		v     any
		field string
	}{
		{pt.Options.Transform, config.Under(at, "options.transform")},
		{b.def.Options.Transform, "defaultTest.options.transform"},
		{pt.Options.Postprocess, config.Under(at, "options.postprocess")},
		{b.def.Options.Postprocess, "defaultTest.options.postprocess"},
	} {
		if c.v != nil {
			return c.v, c.field
		}
	}
	return nil, ""
}

// transformSpec reads a transform as judge/check's Args["transform"] holds
// one: inline JavaScript, or a file:// JavaScript file beside the config
// (path.js:NAME picks an export). ok is false, noted, for what pitwall
// cannot run (Python, a file it cannot read). Code that does not compile is
// kept and noted: its test errors when it runs, as in promptfoo. A file
// outside the config's folder is an error at field, as every file:// is.
func (b *pfBase) transformSpec(v any, context map[string]any, id, field string) (map[string]any, bool) {
	code, isText := v.(string)
	if !isText || strings.TrimSpace(code) == "" {
		b.n.Add("a transform that is not JavaScript code or a file:// path is not applied", id)
		return nil, false
	}
	spec := map[string]any{"code": code, "context": context}
	if ref, isFile := strings.CutPrefix(strings.TrimSpace(code), "file://"); isFile {
		file, fn := ref, ""
		if i := strings.LastIndexByte(ref, ':'); i > 1 && !strings.ContainsAny(ref[i+1:], "/\\") {
			file, fn = ref[:i], ref[i+1:]
		}
		switch strings.ToLower(filepath.Ext(file)) {
		case ".js", ".cjs", ".mjs":
		default:
			b.n.Add(fmt.Sprintf("transform file://%s is not applied: pitwall runs JavaScript transforms only", ref), id)
			return nil, false
		}
		data, _, err := pfFile(b.file, file)
		if config.IsOutside(err) {
			b.col.Add(field, "", "test %q: %v", id, err)
			return nil, false
		}
		if err != nil {
			b.n.Add(fmt.Sprintf("transform is not applied: %v", err), id)
			return nil, false
		}
		spec["code"], spec["module"], spec["file"] = string(data), true, file
		if fn != "" {
			spec["function"] = fn
		}
	}
	module, _ := spec["module"].(bool)
	fn, _ := spec["function"].(string)
	if _, err := jsassert.CompileTransform(spec["code"].(string), module, fn); err != nil {
		b.n.Add(fmt.Sprintf("a transform does not compile (%v): its test errors, as in promptfoo", err), id)
	}
	return spec, true
}

// addTransform and prependTransform put a transform after or before those
// a check already has.
func addTransform(ch *check.Check, spec map[string]any) {
	if ch.Args == nil {
		ch.Args = map[string]any{}
	}
	list, _ := ch.Args["transform"].([]any)
	ch.Args["transform"] = append(list, spec)
}

func prependTransform(ch *check.Check, spec map[string]any) {
	if ch.Args == nil {
		ch.Args = map[string]any{}
	}
	list, _ := ch.Args["transform"].([]any)
	ch.Args["transform"] = append([]any{spec}, list...)
}
