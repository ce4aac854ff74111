package importrun

import (
	"fmt"
	"strings"
)

// prompt-prix's result statuses (battery.py's TestStatus).
const (
	ppCompleted       = "completed"
	ppSemanticFailure = "semantic_failure"
	ppError           = "error"
	ppPending         = "pending"
	ppRunning         = "running"
)

// ppCancelled is the error prompt-prix records for a cell its user
// stopped: the cell did not fail, it never finished.
const ppCancelled = "cancelled by user"

// readPromptPrix reads prompt-prix's results export:
//
//	{"tests": [ids], "models": [ids], "results": [{"test_id", "model_id",
//	 "status", "response", "latency_ms", "error", "failure_reason",
//	 "judge_latency_ms"}]}
//
// (failure_reason and judge_latency_ms only in newer versions).
func readPromptPrix(top obj) (*Source, error) {
	g, err := newGrid(top)
	if err != nil {
		return nil, err
	}
	results, err := top.list("results")
	if err != nil {
		return nil, err
	}
	type raw struct {
		r     obj
		model string
		test  string
	}
	rows := make([]raw, 0, len(results))
	for i, v := range results {
		r, err := asObj(v, fmt.Sprintf("results[%d]", i))
		if err != nil {
			return nil, err
		}
		test, model, err := g.cellOf(r)
		if err != nil {
			return nil, err
		}
		rows = append(rows, raw{r, model, test})
	}
	src, err := g.source("prompt-prix results export", 1)
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]int{}
	for _, row := range rows {
		res, err := ppResult(row.r, &g.notes)
		if err != nil {
			return nil, err
		}
		res.Model, res.Test = g.clean[row.model], row.test
		k := [2]string{res.Model, res.Test}
		if i, dup := seen[k]; dup {
			g.notes.add("a cell has two results in the file: the later one is kept")
			src.Results[i] = res
			continue
		}
		seen[k] = len(src.Results)
		src.Results = append(src.Results, res)
	}
	if top.has("judge_latency_ms") || anyHas(results, "judge_latency_ms") {
		g.notes.add("prompt-prix's judge times (judge_latency_ms) are not kept: pitwall's judges time their own verdicts")
	}
	src.Notes = g.notes.list()
	return src, nil
}

// readConsistency reads prompt-prix's consistency export, whose runs of a
// cell become its repeats:
//
//	{"tests", "models", "runs_total", "aggregates": [{"test_id",
//	 "model_id", "status", "passes", "total", "avg_latency_ms",
//	 "results": [{"status", "response", "latency_ms", "error",
//	 "failure_reason"}]}]}
func readConsistency(top obj) (*Source, error) {
	g, err := newGrid(top)
	if err != nil {
		return nil, err
	}
	runs, err := top.count("runs_total")
	if err != nil {
		return nil, err
	}
	aggs, err := top.list("aggregates")
	if err != nil {
		return nil, err
	}
	type raw struct {
		runs  []any
		model string
		test  string
		at    string
	}
	rows := make([]raw, 0, len(aggs))
	for i, v := range aggs {
		a, err := asObj(v, fmt.Sprintf("aggregates[%d]", i))
		if err != nil {
			return nil, err
		}
		test, model, err := g.cellOf(a)
		if err != nil {
			return nil, err
		}
		list, err := a.list("results")
		if err != nil {
			return nil, err
		}
		runs = max(runs, len(list))
		rows = append(rows, raw{list, model, test, a.field("results")})
	}
	src, err := g.source("prompt-prix consistency export", max(runs, 1))
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	for _, row := range rows {
		k := [2]string{g.clean[row.model], row.test}
		if seen[k] {
			g.notes.add("a cell has two aggregates in the file: the first one is kept")
			continue
		}
		seen[k] = true
		for rep, v := range row.runs {
			r, err := asObj(v, fmt.Sprintf("%s[%d]", row.at, rep))
			if err != nil {
				return nil, err
			}
			res, err := ppResult(r, &g.notes)
			if err != nil {
				return nil, err
			}
			res.Model, res.Test, res.Repeat = k[0], k[1], rep
			src.Results = append(src.Results, res)
		}
	}
	src.Notes = g.notes.list()
	return src, nil
}

// ppResult reads one result: its status decides the outcome, and a
// completed or semantically failed reply is checked again by Import.
func ppResult(r obj, n *notes) (Result, error) {
	var res Result
	status, err := r.str("status")
	if err != nil {
		return res, err
	}
	if res.Output, err = r.str("response"); err != nil {
		return res, err
	}
	ms, _, err := r.num("latency_ms")
	if err != nil {
		return res, err
	}
	res.Latency = millis(ms)
	msg, err := r.str("error")
	if err != nil {
		return res, err
	}
	why, err := r.str("failure_reason")
	if err != nil {
		return res, err
	}
	switch status = strings.ToLower(strings.TrimSpace(status)); status {
	case ppCompleted:
		res.Outcome, res.Verdict = Answered, VerdictPass
	case ppSemanticFailure:
		res.Outcome, res.Verdict, res.Why = Answered, VerdictFail, why
	case ppError:
		res.Outcome, res.Error = Errored, firstOf(msg, why, "prompt-prix recorded an error and no message")
		if strings.TrimSpace(res.Output) != "" && !strings.Contains(strings.ToLower(msg), ppCancelled) {
			// The model answered and what failed was prompt-prix's judge:
			// the reply is checked as any other, and left unjudged for
			// `pitwall rejudge`, rather than a ⚠️ that rejudge passes over.
			res.Outcome, res.Error = Answered, ""
			n.add("results prompt-prix recorded as errors with a response (its judge failed) are imported as answered and unjudged: `pitwall rejudge` grades them")
			break
		}
		if strings.Contains(strings.ToLower(msg), ppCancelled) {
			res.Outcome = Unfinished
			n.add("results prompt-prix recorded as errors because its user stopped the run are ⊘ cancelled cells")
		}
	case ppPending, ppRunning:
		res.Outcome, res.Error = Unfinished, "prompt-prix had not finished this cell when it wrote the export"
	default:
		if strings.TrimSpace(res.Output) != "" {
			res.Outcome = Answered
			n.add(fmt.Sprintf("status %q is not one prompt-prix writes: its responses are checked like completed ones", status))
		} else {
			res.Outcome, res.Error = Errored, firstOf(msg, why, fmt.Sprintf("status %q and no response", status))
			n.add(fmt.Sprintf("status %q is not one prompt-prix writes: results with it and no response are ⚠️ errors", status))
		}
	}
	return res, nil
}

// grid is the models and tests a prompt-prix export lists, with the ones
// its results name that the lists lack added in the order they come.
type grid struct {
	models, tests []string
	mseen, tseen  map[string]bool
	clean         map[string]string
	notes         notes
}

func newGrid(top obj) (*grid, error) {
	g := &grid{mseen: map[string]bool{}, tseen: map[string]bool{}}
	models, err := top.strings("models")
	if err != nil {
		return nil, err
	}
	tests, err := top.strings("tests")
	if err != nil {
		return nil, err
	}
	for _, m := range models {
		g.addModel(m)
	}
	for _, t := range tests {
		g.addTest(t)
	}
	if len(models) > MaxModels || len(tests) > MaxTests {
		return nil, checkShape(len(models), len(tests), 1)
	}
	return g, nil
}

func (g *grid) addModel(m string) {
	if !g.mseen[m] {
		g.mseen[m] = true
		g.models = append(g.models, m)
	}
}

func (g *grid) addTest(t string) {
	if !g.tseen[t] {
		g.tseen[t] = true
		g.tests = append(g.tests, t)
	}
}

// cellOf reads a result's test_id and model_id, adding them to the grid.
func (g *grid) cellOf(r obj) (test, model string, err error) {
	if test, err = r.id("test_id"); err != nil {
		return "", "", err
	}
	if model, err = r.id("model_id"); err != nil {
		return "", "", err
	}
	if strings.TrimSpace(test) == "" || strings.TrimSpace(model) == "" {
		return "", "", fmt.Errorf("%s: a result needs a test_id and a model_id", r.at)
	}
	if !g.tseen[test] {
		g.notes.add("results name tests the export's tests list lacks: they are added after it")
	}
	if !g.mseen[model] {
		g.notes.add("results name models the export's models list lacks: they are added after it")
	}
	g.addTest(test)
	g.addModel(model)
	return test, model, nil
}

// source is the grid as a Source of repeat runs per cell, once the
// limits allow it.
func (g *grid) source(format string, repeat int) (*Source, error) {
	if err := checkShape(len(g.models), len(g.tests), repeat); err != nil {
		return nil, err
	}
	g.clean = cleanModels(g.models, &g.notes)
	src := &Source{Format: format, Tests: g.tests, Repeat: repeat}
	for _, m := range g.models {
		src.Models = append(src.Models, g.clean[m])
	}
	return src, nil
}

func anyHas(list []any, k string) bool {
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			if _, ok := m[k]; ok {
				return true
			}
		}
	}
	return false
}

func firstOf(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}
