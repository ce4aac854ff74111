package compare

import (
	"testing"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// A live cell comes to what the export would make of it: its judge's
// verdict once done, its checks alone with no judge in view, pending while
// it waits or for a judge that has not answered, nothing once cancelled.
func TestALiveCellIsJudgedAsTheExportJudgesIt(t *testing.T) {
	judged := func(status state.CellStatus, js ...*state.Judgment) *state.Cell {
		return &state.Cell{Status: status, Judgments: js}
	}
	done := &state.Judgment{Judge: "j", Status: state.JudgmentDone, Verdict: scoring.Warn, Score: 0.5}
	running := &state.Judgment{Judge: "k", Status: state.JudgmentRunning}
	for _, c := range []struct {
		name    string
		cell    *state.Cell
		judge   string
		verdict string
		score   float64
		outcome Outcome
	}{
		{"completed, no judge in view", judged(state.Completed), "", "pass", 1, Pass},
		{"completed, judged", judged(state.Completed, done), "j", "warn", 0.5, Warn},
		{"completed, its judge still at work", judged(state.Completed, done, running), "k", "", 0, Unjudged},
		{"completed, another judge's verdict only", judged(state.Completed, done), "k", "", 0, Unjudged},
		{"a check failed, no judge", judged(state.Failed), "", "", 0, Fail},
		{"a check failed, judged", judged(state.Failed, done), "j", "", 0, Fail},
		{"errored", judged(state.Errored), "", "", 0, Error},
		{"queued", judged(state.Queued), "", "", 0, Unfinished},
		{"cancelled", judged(state.Cancelled), "j", "", 0, None},
	} {
		v, s := Judged(c.cell, c.judge)
		if v != c.verdict || s != c.score {
			t.Errorf("%s: Judged = %q, %g; want %q, %g", c.name, v, s, c.verdict, c.score)
		}
		if o := OutcomeUnder(c.cell, c.judge); o != c.outcome {
			t.Errorf("%s: OutcomeUnder = %s; want %s", c.name, o, c.outcome)
		}
	}
}
