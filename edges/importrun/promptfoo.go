package importrun

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
)

// promptfoo's ResultFailureReason: why a result did not pass.
const pfFailureError = 2 // the provider failed (API error, timeout)

// readPromptfoo reads the JSON that `promptfoo eval -o results.json` writes:
//
//	{"evalId", "results": {"version", "timestamp", "results": [
//	  {"provider": {"id", "label"}, "testIdx", "promptIdx",
//	   "testCase": {"vars", "description", "metadata"},
//	   "response": {"output", "error", "tokenUsage": {"prompt", "completion"}},
//	   "error", "success", "failureReason", "latencyMs",
//	   "gradingResult": {"pass", "reason"}}, …], "stats"}, "config"}
//
// and older outputs without evalId, or with the summary at the top. A
// result names its test by place: testIdx counts promptfoo's tests after
// their list-valued vars are expanded, and promptIdx counts each
// provider's prompts, providers first. pitwall's promptfoo importer
// expands a config the same way (tests, then combinations, then prompts),
// so the test is the battery's testIdx × prompts + the prompt's place
// among its provider's; Import checks that against the ids the results
// carry (metadata.test_id, vars.test_id, vars.id, metadata.id).
//
// A provider is a model column, named by its label or else its id. The
// output is the reply's text, or its tool calls when the provider returned
// them as objects (OpenAI's tool_calls).
func readPromptfoo(top obj) (*Source, error) {
	summary := top
	if s, ok, err := top.object("results"); err == nil && ok {
		summary = s
	}
	results, err := summary.list("results")
	if err != nil {
		return nil, err
	}
	var n notes
	src := &Source{Format: "promptfoo eval output"}
	if ts, _ := summary.str("timestamp"); ts != "" {
		src.RanAt, _ = time.Parse(time.RFC3339, ts)
	}
	type place struct{ test, prompt int }
	type raw struct {
		model string
		at    place
		res   Result
		hint  string
	}
	rows := make([]raw, 0, len(results))
	prompts := map[string][]int{} // provider → the promptIdx its results use
	models := map[string]bool{}
	maxTest := -1
	for i, v := range results {
		r, err := asObj(v, fmt.Sprintf("%s[%d]", summary.field("results"), i))
		if err != nil {
			return nil, err
		}
		model, err := pfProvider(r)
		if err != nil {
			return nil, err
		}
		ti, err := r.count("testIdx")
		if err != nil {
			return nil, err
		}
		pi, err := r.count("promptIdx")
		if err != nil {
			return nil, err
		}
		if ti >= MaxTests {
			return nil, &limitError{"tests", ti + 1, MaxTests}
		}
		res, err := pfResult(r)
		if err != nil {
			return nil, err
		}
		if !models[model] {
			models[model] = true
			src.Models = append(src.Models, model)
			if len(src.Models) > MaxModels {
				return nil, &limitError{"models", len(src.Models), MaxModels}
			}
		}
		if !slices.Contains(prompts[model], pi) {
			prompts[model] = append(prompts[model], pi)
		}
		maxTest = max(maxTest, ti)
		rows = append(rows, raw{model, place{ti, pi}, res, pfTestID(r)})
	}
	perModel := 0
	for m := range prompts {
		slices.Sort(prompts[m])
		perModel = max(perModel, len(prompts[m]))
	}
	nTests := (maxTest + 1) * max(perModel, 1)
	if err := checkShape(len(src.Models), nTests, 1); err != nil {
		return nil, err
	}
	// Every test place, in battery order, whether or not a result names it.
	for t := 0; t <= maxTest; t++ {
		for p := range perModel {
			src.Tests = append(src.Tests, fmt.Sprintf("test %d, prompt %d", t+1, p+1))
			src.Refs = append(src.Refs, TestRef{Pos: t*perModel + p})
		}
	}
	reps := map[[2]string]int{}
	for _, row := range rows {
		k := row.at.test*perModel + slices.Index(prompts[row.model], row.at.prompt)
		if row.hint != "" && src.Refs[k].Hint == "" {
			src.Refs[k].Hint = row.hint
		}
		res := row.res
		res.Model, res.Test = row.model, src.Tests[k]
		cell := [2]string{res.Model, res.Test}
		res.Repeat = reps[cell] // promptfoo's repeat runs a cell again
		reps[cell]++
		src.Repeat = max(src.Repeat, reps[cell])
		src.Results = append(src.Results, res)
	}
	src.Repeat = max(src.Repeat, 1)
	if err := checkShape(len(src.Models), nTests, src.Repeat); err != nil {
		return nil, err
	}
	n.add("promptfoo's assertions are not taken as verdicts: pitwall runs the battery's checks on each output again")
	src.Notes = n.list()
	return src, nil
}

// pfProvider names a result's model: its provider's label, else its id.
func pfProvider(r obj) (string, error) {
	if s, ok := r.m["provider"].(string); ok && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s), nil
	}
	p, ok, err := r.object("provider")
	if err != nil {
		return "", err
	}
	label, err := p.str("label")
	if err != nil {
		return "", err
	}
	id, err := p.str("id")
	if err != nil {
		return "", err
	}
	if name := strings.TrimSpace(firstOf(label, id)); ok && name != "" {
		return name, nil
	}
	return "", fmt.Errorf("%s: a result needs a provider with an id or a label", r.at)
}

// pfTestID is the id a result's test case gives itself, if any (the keys
// pitwall's promptfoo importer takes a test's id from, in its order).
func pfTestID(r obj) string {
	tc, ok, _ := r.object("testCase")
	if !ok {
		return ""
	}
	meta, _, _ := tc.object("metadata")
	vars, _, _ := tc.object("vars")
	for _, src := range []struct {
		o obj
		k string
	}{{meta, "test_id"}, {vars, "test_id"}, {vars, "id"}, {meta, "id"}} {
		if src.o.m == nil {
			continue
		}
		if s, err := src.o.id(src.k); err == nil && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// pfResult reads what a result answered and what promptfoo concluded.
func pfResult(r obj) (Result, error) {
	var res Result
	resp, hasResp, err := r.object("response")
	if err != nil {
		return res, err
	}
	msg, err := r.str("error")
	if err != nil {
		return res, err
	}
	reason, err := r.count("failureReason")
	if err != nil {
		return res, err
	}
	ms, _, err := r.num("latencyMs")
	if err != nil {
		return res, err
	}
	res.Latency = millis(ms)
	if hasResp {
		if rmsg, err := resp.str("error"); err != nil {
			return res, err
		} else if msg == "" {
			msg = rmsg
		}
		if use, ok, err := resp.object("tokenUsage"); err != nil {
			return res, err
		} else if ok {
			p, _, _ := use.num("prompt")
			c, _, _ := use.num("completion")
			res.PromptTokens, res.CompletionTokens = tokens(p), tokens(c)
		}
		if res.Latency == 0 {
			ms, _, _ := resp.num("latencyMs")
			res.Latency = millis(ms)
		}
		res.Output, res.ToolCalls = pfOutput(resp.m["output"])
	}
	if reason == pfFailureError || !hasResp && msg != "" {
		res.Outcome, res.Error = Errored, firstOf(msg, "promptfoo recorded an error and no message")
		return res, nil
	}
	res.Outcome = Answered
	if pass, ok := r.m["success"].(bool); ok {
		res.Verdict = VerdictFail
		if pass {
			res.Verdict = VerdictPass
		} else if g, ok, _ := r.object("gradingResult"); ok {
			res.Why, _ = g.str("reason")
		}
	}
	return res, nil
}

// pfOutput reads a provider's output: text, or tool calls given as
// objects (a list of calls, or a message with tool_calls and content).
// Anything else is kept as its JSON text.
func pfOutput(v any) (string, []chat.ToolCall) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []any:
		var calls []chat.ToolCall
		for _, e := range v {
			c, ok := callObject(e)
			if !ok {
				return textutil.JSON(v), nil
			}
			calls = append(calls, c)
		}
		return "", calls
	case map[string]any:
		if list, ok := v["tool_calls"].([]any); ok {
			text, _ := v["content"].(string)
			calls, ok := objectCalls(list)
			if ok {
				return text, calls
			}
		}
		if fc, ok := v["function_call"]; ok {
			if c, ok := callObject(fc); ok {
				text, _ := v["content"].(string)
				return text, []chat.ToolCall{c}
			}
		}
		if c, ok := callObject(v); ok {
			return "", []chat.ToolCall{c}
		}
	}
	return textutil.JSON(v), nil
}

func objectCalls(list []any) ([]chat.ToolCall, bool) {
	out := make([]chat.ToolCall, 0, len(list))
	for _, e := range list {
		c, ok := callObject(e)
		if !ok {
			return nil, false
		}
		out = append(out, c)
	}
	return out, true
}

func tokens(f float64) int {
	if f < 0 || f > 1e9 {
		return 0
	}
	return int(f)
}
