package ui

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// TestBoardAppliedCellByCellAgreesWithOneTalliedAfresh changes cells at
// random between snapshots, copying on write as the runner does, and checks
// that the board brought up to each snapshot (re-tallying only the cells
// whose pointer changed) holds what a board tallied afresh from it holds.
func TestBoardAppliedCellByCellAgreesWithOneTalliedAfresh(t *testing.T) {
	tests, models, repeat := 5, 4, 2
	run := &state.BatteryRun{Repeat: repeat, Plan: scoring.Plan{}}
	for i := range tests {
		run.Tests = append(run.Tests, state.TestInfo{ID: string(rune('a' + i))})
		row := &state.Row{}
		for range models * repeat {
			row.Cells = append(row.Cells, &state.Cell{Status: state.Pending})
		}
		run.Rows = append(run.Rows, row)
	}
	for m := range models {
		run.Models = append(run.Models, string(rune('m'+m)))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	statuses := []state.CellStatus{state.Queued, state.Running, state.Completed, state.Failed, state.Errored}
	verdicts := []scoring.Verdict{scoring.Pass, scoring.Fail, scoring.Warn, scoring.Verdict("error")}
	var b board
	for step := range 200 {
		next := *run
		next.Rows = slices.Clone(run.Rows)
		for range rng.IntN(5) {
			ti := rng.IntN(tests)
			if next.Rows[ti] == run.Rows[ti] {
				next.Rows[ti] = &state.Row{Cells: slices.Clone(run.Rows[ti].Cells)}
			}
			i := rng.IntN(models * repeat)
			c := *next.Rows[ti].Cells[i]
			c.Status = statuses[rng.IntN(len(statuses))]
			if c.Status == state.Completed && rng.IntN(2) == 0 {
				state.SetJudgment(&c, &state.Judgment{Judge: "j", Status: state.JudgmentDone, Verdict: verdicts[rng.IntN(len(verdicts))]})
			}
			next.Rows[ti].Cells[i] = &c
		}
		run = &next
		b.apply(run, "j")
		var fresh board
		fresh.apply(run, "j")
		if !reflect.DeepEqual(b, fresh) {
			t.Fatalf("step %d: the board applied cell by cell differs from one tallied afresh:\n%+v\n%+v", step, b, fresh)
		}
	}
}
