package promptfoo

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
)

// A promptfoo judge-competence config runs a judge prompt whose vars hold
// a fixed candidate output and the verdict a good judge gives it
// (prompt-prix's judge_competence_tests.promptfoo.yaml). `pitwall run`
// reads it as any promptfoo config (the models it runs are the judges,
// and expected_verdict becomes a verdict check); `pitwall qualify` reads it
// as a judge battery, grading the fixed outputs with the config's own
// judges and templates. As a judge battery, each test (times each
// combination of list-valued vars) is one JudgeTest:
//
//  1. Its id is metadata.test_id (or vars.test_id, vars.id, metadata.id,
//     the description made into a slug, test-N), made unique with -2, -3 ….
//  2. The expected verdict is vars.expected_verdict (or metadata.
//     expected_verdict, vars.expect, metadata.expect): pass or fail in any
//     case. A test expecting PARTIAL is left out, with a warning: a judge
//     battery's verdicts are pass or fail.
//  3. The candidate output is the first of vars.candidate,
//     candidate_output, actual_output, output, response, completion and
//     answer; or, when the test's provider (options.provider, else
//     defaultTest's, else the config's only one) is promptfoo's echo, the
//     rendered prompt, one test per prompt. Output that is JSON is read as
//     a model sends it: a list of OpenAI tool calls (an empty list is no
//     reply at all), {"content": ..., "tool_calls": [...]}, one tool call,
//     or a JSON string (the reply text); anything else is the reply text.
//  4. What the judge is told the task was is the first of
//     vars.task_description, task, question, query, input, prompt and user
//     (vars.system is the system prompt); the criteria are vars.criteria,
//     expected_behavior or rubric; the reference vars.reference,
//     expected_response or expected_output; tools and tool_choice come from
//     the provider's config, as for a run.
//  5. Prompts (echo aside) and assertions are not read: they shape and
//     grade the judge's own reply, which qualify compares with the
//     expected verdict instead.
//
// Errors name the file and line, the field, and the test by number and id.

var (
	pfVerdictKeys   = []string{"vars.expected_verdict", "metadata.expected_verdict", "vars.expect", "metadata.expect"}
	pfCandidateKeys = []string{"candidate", "candidate_output", "actual_output", "output", "response", "completion", "answer"}
	pfTaskKeys      = []string{"task_description", "task", "question", "query", "input", "prompt", "user"}
	pfCriteriaKeys  = []string{"criteria", "expected_behavior", "rubric"}
	pfReferenceKeys = []string{"reference", "expected_response", "expected_output"}
)

// loadPromptfooJudge reads a promptfoo judge-competence config as a judge
// battery.
func loadPromptfooJudge(f config.File) ([]config.JudgeTest, error) {
	path, data, n := f.Path, f.Data, f.Notes
	root, src, top, err := readPFYAML(path, data, "judge battery")
	if err != nil {
		return nil, err
	}
	col := config.NewCollector(src)
	m, _ := top.(map[string]any)
	rawTests, _ := m["tests"].([]any)
	if len(rawTests) == 0 {
		return nil, &config.Error{File: path, Line: root.Line, Field: "tests",
			Msg:  "not a promptfoo judge battery: no tests written in the file",
			Hint: "a judge battery's tests carry vars.expected_verdict and the output to grade (vars.output)"}
	}
	lenient := func(string, string) {} // keys of promptfoo's own running do not matter here
	var def pfTest
	if raw, ok := m["defaultTest"]; ok {
		def, _ = decodePFTest(col, raw, "defaultTest", lenient)
	}
	base := &pfBase{file: f, n: n, col: col, def: def}
	base.provider = providersRequest(col, n, m["providers"])
	base.defReq = pfProviderRequest(col, n, def.Options.Provider, "defaultTest.options.provider")
	configEcho := isEcho(m["providers"])

	var (
		out      []config.JudgeTest
		partial  []string
		asserted bool
		ids      = map[string]bool{}
	)
	for i, raw := range rawTests {
		at := config.IndexPath("tests", i)
		pt, ok := decodePFTest(col, raw, at, lenient)
		if !ok {
			continue
		}
		asserted = asserted || len(pt.Assert) > 0 || len(def.Assert) > 0
		echo := isEcho(pt.Options.Provider) || (pt.Options.Provider == nil &&
			(isEcho(def.Options.Provider) || (def.Options.Provider == nil && configEcho)))
		var prompts []pfPrompt
		if echo {
			ps, err := pfPrompts(f, mapValue(root, "prompts"), n)
			if err != nil {
				return nil, err
			}
			prompts = ps
		}
		for _, jt := range base.judgeTests(pt, i, at, prompts) {
			if jt.Expect == "" { // PARTIAL
				partial = append(partial, jt.ID)
				continue
			}
			if ids[jt.ID] {
				id := jt.ID
				for k := 2; ids[jt.ID]; k++ {
					jt.ID = fmt.Sprintf("%s-%d", id, k)
				}
				n.Add("tests share an id (from their description or vars): later ones get -2, -3 …", jt.ID)
			}
			ids[jt.ID] = true
			out = append(out, jt)
		}
	}
	if len(col.Errs) > 0 {
		return nil, col.Errs.Err()
	}
	for _, id := range partial {
		n.Add("a test expecting PARTIAL is left out: a judge battery's verdicts are pass or fail", id)
	}
	if asserted {
		n.Add("assertions are not read: they grade the judge's own reply, and qualify compares its verdict with expected_verdict instead", "")
	}
	if len(out) == 0 {
		return nil, &config.Error{File: path, Line: root.Line, Field: "tests",
			Msg: "no test of the judge battery expects pass or fail", Hint: "set vars.expected_verdict to PASS or FAIL"}
	}
	return out, nil
}

// judgeTests makes the judge tests of one promptfoo test: one per
// combination of its list-valued vars (and per prompt, with echo). A test
// whose expected verdict is PARTIAL comes back with Expect "".
func (b *pfBase) judgeTests(pt pfTest, i int, at string, echo []pfPrompt) []config.JudgeTest {
	vars := map[string]any{}
	varAt := map[string]string{}
	for k, v := range pfMap(b.def.Vars) {
		vars[k], varAt[k] = v, config.JoinPath("defaultTest.vars", k)
	}
	if pt.Vars != nil {
		if _, ok := pt.Vars.(map[string]any); !ok {
			b.col.Add(config.JoinPath(at, "vars"), "vars is a table of names and values", "vars must be a table, got %s", config.Describe(pt.Vars, "json"))
			return nil
		}
	}
	for k, v := range pfMap(pt.Vars) {
		vars[k], varAt[k] = v, config.JoinPath(config.JoinPath(at, "vars"), k)
	}
	b.readVarFiles(vars, at)
	meta := map[string]any{}
	for _, src := range []map[string]any{b.def.Metadata, pt.Metadata} {
		for k, v := range src {
			meta[k] = v
		}
	}
	combos, err := varCombinations(vars)
	if err == nil && len(combos)*max(len(echo), 1) > maxExpandedTests {
		err = fmt.Errorf("its combinations of list-valued vars make more than %d tests", maxExpandedTests)
	}
	if err != nil {
		b.col.Add(config.JoinPath(at, "vars"), "split the test, or shorten its lists", "%v", err)
		return nil
	}
	baseID := firstString(meta["test_id"], vars["test_id"], vars["id"], meta["id"])
	if baseID == "" {
		baseID = slug(pt.Description)
	}
	if baseID == "" {
		baseID = fmt.Sprintf("test-%d", i+1)
	}
	req := pfProviderRequest(b.col, b.n, pt.Options.Provider, config.JoinPath(at, "options.provider"))
	var out []config.JudgeTest
	for k, vs := range combos {
		id := baseID
		if len(combos) > 1 {
			id = fmt.Sprintf("%s#%d", baseID, k+1)
		}
		label := fmt.Sprintf("test %d (%s)", i+1, id)
		field := func(key string) string {
			if p, ok := varAt[key]; ok {
				return p
			}
			return config.JoinPath(config.JoinPath(at, "vars"), key)
		}
		sources := map[string]map[string]any{"vars": vs, "metadata": meta}

		jt := config.JudgeTest{Test: config.Test{ID: id, Name: pt.Description}}
		jt.Category = firstString(meta["category"], vs["category"])
		jt.Severity = strings.ToLower(firstString(meta["severity"], vs["severity"]))
		jt.System = firstString(vs["system"])
		jt.User = firstString(pickVars(vs, pfTaskKeys)...)
		jt.Criteria = firstString(pickVars(vs, pfCriteriaKeys)...)
		jt.Reference = firstString(pickVars(vs, pfReferenceKeys)...)
		pfApplyRequest(&jt.Test, b.provider, b.defReq, req)

		verdictKey, verdictField, verdict := "", "", ""
		for _, key := range pfVerdictKeys {
			where, name, _ := strings.Cut(key, ".")
			if v, ok := sources[where][name]; ok && v != nil {
				verdictKey, verdict = key, strings.TrimSpace(fmt.Sprint(v))
				verdictField = config.JoinPath(config.JoinPath(at, where), name)
				if where == "vars" {
					verdictField = field(name)
				}
				break
			}
		}
		switch v := strings.ToLower(verdict); {
		case verdictKey == "":
			b.col.Add(at, `add vars.expected_verdict: PASS or FAIL, the verdict a good judge gives this output`,
				"%s has no expected verdict (vars.expected_verdict)", label)
		case v == "pass" || v == "fail":
			jt.Expect = scoring.Verdict(v)
		case v == "partial":
			// Left out by the caller, with a warning.
		default:
			b.col.Add(verdictField, config.DidYouMean(v, []string{"pass", "fail"}),
				"%s: %s is %q: want pass or fail", label, verdictKey, verdict)
		}

		switch key, v := pickCandidate(vs); {
		case key != "":
			text, calls, err := candidateOutput(v)
			if err != nil {
				b.col.Add(field(key), `write the output as a model sends it: text, or a JSON list of tool calls {"function": {"name": ..., "arguments": "..."}}`,
					"%s: vars.%s: %v", label, key, err)
			}
			jt.Candidate, jt.CandidateToolCalls = text, calls
		case len(echo) > 0:
		default:
			b.col.Add(config.JoinPath(at, "vars"), "add vars.output (or actual_output, response, candidate): the output the judges grade",
				"%s has no fixed output to judge", label)
		}
		if jt.User == "" && len(echo) == 0 {
			b.col.Add(config.JoinPath(at, "vars"), "add vars.task_description (or question, input): what the candidate was asked",
				"%s does not say what the candidate was asked", label)
		}
		if len(echo) == 0 {
			out = append(out, jt)
			continue
		}
		for _, p := range echo {
			e := jt
			if len(echo) > 1 {
				e.ID += "/" + p.id
			}
			e.Candidate = strings.TrimRight(b.render(p.text, vs, e.ID), "\n")
			if e.User == "" {
				e.User = "(not given: the echo provider's prompt is the output)"
			}
			out = append(out, e)
		}
	}
	return out
}

// pfMap is a decoded table, or nil.
func pfMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// pickVars is the values of keys in vars, in keys' order.
func pickVars(vars map[string]any, keys []string) []any {
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, vars[k])
	}
	return out
}

// pickCandidate finds the var that holds the output to grade.
func pickCandidate(vars map[string]any) (string, any) {
	for _, k := range pfCandidateKeys {
		if v, ok := vars[k]; ok && v != nil {
			return k, v
		}
	}
	return "", nil
}

// candidateOutput reads a fixed output as a model would have sent it.
func candidateOutput(v any) (string, []chat.ToolCall, error) {
	s, isText := v.(string)
	if isText {
		t := strings.TrimSpace(s)
		if t == "" || !strings.ContainsAny(t[:1], `[{"`) {
			return strings.TrimRight(s, "\n"), nil, nil
		}
		var parsed any
		if json.Unmarshal([]byte(t), &parsed) != nil {
			return strings.TrimRight(s, "\n"), nil, nil
		}
		v = parsed
	}
	asText := func() (string, []chat.ToolCall, error) {
		if isText {
			return strings.TrimRight(s, "\n"), nil, nil
		}
		b, err := json.Marshal(v)
		return string(b), nil, err
	}
	switch o := v.(type) {
	case string:
		return o, nil, nil
	case []any:
		calls, ok := toolCalls(o)
		if !ok {
			return asText()
		}
		return "", calls, nil
	case map[string]any:
		if list, ok := o["tool_calls"].([]any); ok {
			calls, ok := toolCalls(list)
			if !ok {
				return "", nil, fmt.Errorf("tool_calls holds something that is not a tool call")
			}
			content, _ := o["content"].(string)
			return content, calls, nil
		}
		if call, ok := toolCall(o); ok {
			return "", []chat.ToolCall{call}, nil
		}
	}
	return asText()
}

// toolCalls reads a list of tool calls; false when an element is not one.
func toolCalls(list []any) ([]chat.ToolCall, bool) {
	calls := []chat.ToolCall{}
	for _, el := range list {
		m, _ := el.(map[string]any)
		call, ok := toolCall(m)
		if !ok {
			return nil, false
		}
		calls = append(calls, call)
	}
	return calls, true
}

// toolCall reads one tool call, OpenAI's {"function": {"name", "arguments"}}
// or a bare {"name", "arguments"}. Arguments written as a string are kept
// as written (malformed on purpose, maybe); others are their JSON.
func toolCall(m map[string]any) (chat.ToolCall, bool) {
	fn := m
	if f, ok := m["function"].(map[string]any); ok {
		fn = f
	}
	name, _ := fn["name"].(string)
	if _, has := fn["arguments"]; name == "" || !has {
		return chat.ToolCall{}, false
	}
	id, _ := m["id"].(string)
	args, ok := config.CandidateArgs(fn["arguments"])
	if !ok {
		b, err := json.Marshal(fn["arguments"])
		if err != nil {
			return chat.ToolCall{}, false
		}
		args = string(b)
	}
	return chat.ToolCall{ID: id, Name: name, Arguments: args}, true
}

// isEcho reports whether a provider (an id, {id: ...}, or a list of one)
// is promptfoo's echo provider, which answers with the prompt.
func isEcho(v any) bool {
	switch p := v.(type) {
	case string:
		return p == "echo"
	case map[string]any:
		id, _ := p["id"].(string)
		return id == "echo"
	case []any:
		return len(p) == 1 && isEcho(p[0])
	}
	return false
}

// isPromptfooJudgeBattery reports whether a promptfoo config's tests carry
// an expected verdict and an output to grade (see loadPromptfooJudge).
func isPromptfooJudgeBattery(data []byte) bool {
	var top any
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	m, _ := config.JSONNormalize(top).(map[string]any)
	tests, _ := m["tests"].([]any)
	def := pfMap(m["defaultTest"])
	echo := isEcho(m["providers"]) || isEcho(pfMap(def["options"])["provider"])
	for _, t := range tests {
		tm := pfMap(t)
		vars := map[string]any{}
		for _, src := range []any{def["vars"], tm["vars"]} {
			for k, v := range pfMap(src) {
				vars[k] = v
			}
		}
		meta := map[string]any{}
		for _, src := range []any{def["metadata"], tm["metadata"]} {
			for k, v := range pfMap(src) {
				meta[k] = v
			}
		}
		hasVerdict := vars["expected_verdict"] != nil || vars["expect"] != nil ||
			meta["expected_verdict"] != nil || meta["expect"] != nil
		key, _ := pickCandidate(vars)
		if hasVerdict && (key != "" || echo || isEcho(pfMap(tm["options"])["provider"])) {
			return true
		}
	}
	return false
}
