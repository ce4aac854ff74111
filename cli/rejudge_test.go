package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// demoOverHTTP is examples/demo.toml's run pointed at the demo's fleet as
// `pitwall sim examples/demo.toml` serves it, as a user points pitwall at
// LM Studio and Ollama: the simulator then counts what it received.
const demoOverHTTP = `
name    = "demo"
battery = %q
models  = ["qwen3-8b", "llama-3.1-8b", "gemma-3-12b", "mistral-7b", "phi-4-mini"]

[run]
timeout     = "60s"
max_tokens  = 512
temperature = 0.0
seed        = 42
retries     = 0
judging     = "two-phase"

[[servers]]
name  = "gpu0"
kind  = "lmstudio"
url   = %q
slots = 4

[[servers]]
name  = "gpu1"
kind  = "ollama"
url   = %q
slots = 4

[scoring]
mode        = "judge"
samples     = 1
min_score   = 0.5
aggregation = "mean"

[[scoring.judges]]
name   = "large"
model  = "judge-large"
server = "gpu0"

[[scoring.judges]]
name   = "small"
model  = "judge-small"
server = "gpu1"
`

var demoModels = []string{"qwen3-8b", "llama-3.1-8b", "gemma-3-12b", "mistral-7b", "phi-4-mini"}

// demoOverSim serves the demo's fleet, runs the demo over HTTP headless into
// dir's ledger and returns the fleet and the ledger's path.
func demoOverSim(t *testing.T, dir string) (*simFleet, string) {
	t.Helper()
	fleet := startSimFleet(t, dir, demoPath(t), "0.02")
	battery, err := filepath.Abs("../examples/demo-battery.toml")
	if err != nil {
		t.Fatal(err)
	}
	config := writeFile(t, dir, "demo-http.toml", fmt.Sprintf(demoOverHTTP, battery, fleet.urls["gpu0"], fleet.urls["gpu1"]))
	if code, _, errOut := pitwall(t, dir, nil, "run", config, "--headless"); code != 0 && code != 1 {
		t.Fatalf("the demo exited %d:\n%s", code, errOut)
	}
	return fleet, filepath.Join(dir, ".pitwall", "ledger.db")
}

func TestRejudgeWithAnotherJudgeMakesJudgeRequestsOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fleet, db := demoOverSim(t, dir)
	first := exportRun(t, dir, db, "last")
	completed := 0
	for _, c := range first.Cells {
		if c.Status == "completed" {
			completed++
			if _, ok := c.Judgments["small"]; ok {
				t.Fatalf("cell %s × %s has a verdict of small before any re-judge", c.Model, c.Test)
			}
		}
	}
	was := requestsOf(t, db, first.Run.ID)

	before := fleet.requests(t)
	code, stdout, stderr := pitwall(t, dir, nil, "rejudge", "last", "--judge", "small", "--headless", "--db", db)
	after := fleet.requests(t)
	if n := sent(before, after, demoModels...); n != 0 {
		t.Errorf("the simulator received %d requests for the demo's models during the re-judge, want none", n)
	}
	if n := sent(before, after, "judge-large"); n != 0 {
		t.Errorf("the simulator received %d requests for the large judge, want none", n)
	}
	sentSmall := sent(before, after, "judge-small")

	// Exit code: run's, with small in view; show computes it alike.
	show, _, showErr := pitwall(t, dir, nil, "show", "last", "--judge", "small", "--headless", "--db", db)
	if code != show {
		t.Errorf("rejudge exited %d, show --judge small %d\n%s%s", code, show, stderr, showErr)
	}
	if !strings.Contains(stdout, "(judge small)") {
		t.Errorf("the summary is not small's:\n%s", stdout)
	}
	// Only the new verdicts are printed, one line each.
	if n := strings.Count(stderr, " (small)"); n != completed {
		t.Errorf("%d judge lines for %d completed cells:\n%s", n, completed, stderr)
	}
	if strings.Contains(stderr, "[1/80]") {
		t.Errorf("the re-judge printed the run's inference lines again:\n%s", stderr)
	}

	got := exportRun(t, dir, db, "last")
	for _, c := range got.Cells {
		_, large := c.Judgments["large"]
		_, small := c.Judgments["small"]
		if c.Status == "completed" && (!large || !small) {
			t.Errorf("cell %s × %s: verdicts %v, want large's and small's", c.Model, c.Test, c.Judgments)
		}
	}
	for _, d := range sameCells(got, first) {
		t.Error("the verdict in view or a cell changed: " + d)
	}
	var judge, warm int64
	for _, q := range requestsOf(t, db, first.Run.ID)[len(was):] {
		switch {
		case q.Purpose == ledger.PurposeInference:
			t.Errorf("an inference request was recorded during the re-judge: %d %s × %s", q.ID, q.Model, q.Test)
		case q.Purpose == ledger.PurposeJudge && q.Judge != "small":
			t.Errorf("judge %s was asked during a re-judge with small (request %d)", q.Judge, q.ID)
		case q.Purpose == ledger.PurposeJudge && sentOut(q):
			judge++
		case q.Purpose == ledger.PurposeWarmup:
			warm++
		}
	}
	if judge == 0 || sentSmall != judge+warm {
		t.Errorf("%d completed cells; the ledger says %d judge requests and %d warm-ups were sent, the simulator received %d",
			completed, judge, warm, sentSmall)
	}
	t.Logf("%d completed cells re-judged by small: %d judge requests, %d warm-ups", completed, judge, warm)
}

func TestRejudgeOnlyPicksCellsByTheVerdictInView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fleet, db := demoOverSim(t, dir)
	first := exportRun(t, dir, db, "last")

	refusals := []struct {
		name string
		args []string
		want []string // in the message
	}{
		{"unknown --only", []string{"--only", "passed"}, []string{"--only", "failed, warn or all"}},
		{"unknown judge", []string{"--judge", "medium"}, []string{"medium", "large, small"}},
		{"no samples", []string{"--samples", "-1"}, []string{`--samples "-1"`, "1 or more"}},
		{"no such run", []string{"--judge", "small", "nope"}, []string{"nope"}},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before := fleet.requests(t)
			args := append([]string{"rejudge"}, tc.args...)
			if !strings.Contains(strings.Join(tc.args, " "), "nope") {
				args = append(args, "last")
			}
			code, _, stderr := pitwall(t, dir, nil, append(args, "--headless", "--db", db)...)
			if code != 2 {
				t.Errorf("exit %d, want 2: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the message does not say %q: %s", w, stderr)
				}
			}
			if n := sent(before, fleet.requests(t), append(demoModels, "judge-large", "judge-small")...); n != 0 {
				t.Errorf("a refused re-judge sent %d requests", n)
			}
		})
	}

	// The demo's judge votes once per cell: no verdict is WARN.
	warn, failed := 0, map[string]bool{}
	for _, c := range first.Cells {
		switch {
		case c.Status != "completed" || c.Verdict == nil:
		case *c.Verdict == "warn":
			warn++
		case *c.Verdict == "fail":
			failed[cellKey(c.Model, c.Test, c.Repeat)] = true
		}
	}
	if warn != 0 || len(failed) == 0 {
		t.Fatalf("the demo gave %d WARN and %d FAIL verdicts; this test needs none and some", warn, len(failed))
	}
	was := requestsOf(t, db, first.Run.ID)
	code, _, stderr := pitwall(t, dir, nil, "rejudge", "last", "--only", "warn", "--headless", "--db", db)
	if !strings.Contains(stderr, "nothing to re-judge") || len(requestsOf(t, db, first.Run.ID)) != len(was) {
		t.Errorf("--only warn with no WARN verdict: exit %d, %s", code, stderr)
	}

	code, _, stderr = pitwall(t, dir, nil, "rejudge", "last", "--only", "failed", "--headless", "--db", db)
	if code != 0 && code != 1 {
		t.Fatalf("--only failed exited %d: %s", code, stderr)
	}
	asked := map[string]bool{}
	for _, q := range requestsOf(t, db, first.Run.ID)[len(was):] {
		if q.Purpose != ledger.PurposeJudge || q.Judge != "large" {
			t.Errorf("request %d: %s %s, want only large's judge requests", q.ID, q.Purpose, q.Judge)
			continue
		}
		asked[cellKey(q.CandidateModel, q.Test, q.Repeat)] = true
	}
	for k := range failed {
		if !asked[k] {
			t.Errorf("FAIL cell %s was not re-judged", k)
		}
	}
	for k := range asked {
		if !failed[k] {
			t.Errorf("cell %s was re-judged, but its verdict was not FAIL", k)
		}
	}
	if n := strings.Count(stderr, "(large)"); n != len(failed) {
		t.Errorf("%d judge lines for %d FAIL cells:\n%s", n, len(failed), stderr)
	}
}

// grid is a finished one-model run of the given cells, judge "a" in view.
func grid(cells ...state.Cell) *state.BatteryRun {
	b := &state.BatteryRun{Models: []string{"m"}, Repeat: 1, Final: true,
		Plan: scoring.Plan{Mode: scoring.ModeJudge, Judges: []string{"a"}, InView: "a"}}
	for _, c := range cells {
		c.Model = "m"
		b.Tests = append(b.Tests, state.TestInfo{ID: c.Test})
		b.Rows = append(b.Rows, &state.Row{Cells: []*state.Cell{&c}})
	}
	return b
}

func judged(test string, status state.CellStatus, v scoring.Verdict) state.Cell {
	c := state.Cell{Test: test, Status: status}
	if v != "" {
		c.Judgments = []*state.Judgment{{Judge: "a", Status: state.JudgmentDone, Verdict: v}}
	}
	return c
}

func TestPickCellsByTheVerdictInView(t *testing.T) {
	t.Parallel()
	b := grid(judged("pass", state.Completed, scoring.Pass), judged("fail", state.Completed, scoring.Fail),
		judged("warn", state.Completed, scoring.Warn), judged("jerr", state.Completed, scoring.Error),
		judged("unjudged", state.Completed, ""), judged("checks", state.Failed, ""), judged("down", state.Errored, ""))
	for only, want := range map[string]string{
		onlyAll:    "pass fail warn jerr unjudged",
		onlyFailed: "fail",
		onlyWarn:   "warn",
	} {
		var got []string
		for _, r := range pickCells(b, only) {
			got = append(got, r.Test)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("--only %s picks %v, want %s", only, got, want)
		}
	}
}

// The output of a re-judge ends when every verdict asked for is new and
// done, not at the first snapshot with nothing in flight: a snapshot from
// before the re-judge has nothing in flight either.
func TestRejudgeIsOverWhenEveryVerdictIsNew(t *testing.T) {
	t.Parallel()
	was := grid(judged("x", state.Completed, scoring.Pass), judged("y", state.Completed, scoring.Fail))
	refs := pickCells(was, onlyAll)
	w := &rejudgeWatch{view: "a", refs: refs, before: judgmentsOf(was, refs, []string{"a"})}
	redo := func(inFlight int, statuses ...state.JudgmentStatus) *state.BatteryRun {
		b := grid(judged("x", state.Completed, ""), judged("y", state.Completed, ""))
		b.JudgeInFlight = inFlight
		for i, s := range statuses {
			b.Rows[i].Cells[0].Judgments = []*state.Judgment{{Judge: "a", Status: s, Verdict: scoring.Pass}}
		}
		return b
	}
	cases := []struct {
		name string
		b    *state.BatteryRun
		want bool
	}{
		{"the run as it was", was, false},
		{"in flight", redo(1, state.JudgmentDone, state.JudgmentQueued), false},
		{"one cell not judged yet", redo(0, state.JudgmentDone), false},
		{"one verdict queued", redo(0, state.JudgmentDone, state.JudgmentQueued), false},
		{"all new and done", redo(0, state.JudgmentDone, state.JudgmentDone), true},
	}
	for _, tc := range cases {
		if got := w.over(tc.b); got != tc.want {
			t.Errorf("%s: over = %v, want %v", tc.name, got, tc.want)
		}
	}
	w.interrupted.Store(true)
	if !w.over(was) {
		t.Errorf("a cancelled re-judge with nothing in flight is not over")
	}
	if w.over(redo(2)) {
		t.Errorf("a cancelled re-judge with judge requests in flight is over")
	}
}
