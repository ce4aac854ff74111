package runner

import (
	"math/rand/v2"
	"testing"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// TestTallyCountsOnlyEditedCellsAndAgreesWithAFullCount edits cells at
// random between snapshots (several edits of one cell, cells of rows an
// older snapshot holds, the judge in view changing, a restore) and checks
// that the table's running count is the count of every cell.
func TestTallyCountsOnlyEditedCellsAndAgreesWithAFullCount(t *testing.T) {
	tests, models := []string{"t0", "t1", "t2", "t3"}, []string{"m0", "m1", "m2"}
	tbl := newCellTable(tests, models, 2)
	rng := rand.New(rand.NewPCG(1, 2))
	statuses := []state.CellStatus{state.Queued, state.Running, state.Completed, state.Failed, state.Errored}
	verdicts := []scoring.Verdict{scoring.Pass, scoring.Fail, scoring.Warn}
	judge := "j"
	for step := range 300 {
		for range rng.IntN(6) {
			c := tbl.edit(posOf(rng.IntN(len(tests)), rng.IntN(len(models)), rng.IntN(2)))
			c.Status = statuses[rng.IntN(len(statuses))]
			if c.Status == state.Completed && rng.IntN(2) == 0 {
				state.SetJudgment(c, &state.Judgment{Judge: []string{"j", "k"}[rng.IntN(2)], Status: state.JudgmentDone,
					Verdict: verdicts[rng.IntN(len(verdicts))]})
			}
		}
		switch {
		case step%50 == 49:
			judge = map[string]string{"j": "k", "k": "j"}[judge]
		case step%70 == 69:
			tbl.restore(tbl.publish())
		}
		got := tbl.tally(judge)
		rows := tbl.publish()
		var want state.Tally
		for _, r := range rows {
			want.AddRow(r, judge, 1)
		}
		if got != want {
			t.Fatalf("step %d: running count %+v, full count %+v", step, got, want)
		}
	}
}
