package state_test

import (
	"fmt"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// The tally counts cells by status and, for the judge in view, completed
// cells by verdict; a cell that changes is taken back (sign -1) and counted
// again, so the count follows the run without a recount.
func ExampleTally() {
	judged := func(v scoring.Verdict) *state.Cell {
		return &state.Cell{Status: state.Completed, Judgments: []*state.Judgment{
			{Judge: "gemma", Status: state.JudgmentDone, Verdict: v},
		}}
	}
	cells := []*state.Cell{
		judged(scoring.Pass),
		judged(scoring.Fail),
		{Status: state.Completed}, // not judged yet
		{Status: state.Errored},   // ⚠️
		{Status: state.Queued},
	}

	var t state.Tally
	for _, c := range cells {
		t.Add(c, "gemma", +1)
	}
	fmt.Printf("done %d of %d, waiting %d; PASS %d FAIL %d, judged %d of %d\n",
		t.Done(), t.Cells(), t.Waiting(), t.Pass, t.Fail, t.Judged, t.ToJudge)

	// The queued cell completes and its judge passes it.
	t.Add(cells[4], "gemma", -1)
	t.Add(judged(scoring.Pass), "gemma", +1)
	fmt.Printf("done %d of %d, waiting %d; PASS %d FAIL %d, judged %d of %d\n",
		t.Done(), t.Cells(), t.Waiting(), t.Pass, t.Fail, t.Judged, t.ToJudge)
	// Output:
	// done 4 of 5, waiting 1; PASS 1 FAIL 1, judged 2 of 3
	// done 5 of 5, waiting 0; PASS 2 FAIL 1, judged 3 of 4
}

// A run's exit code is read from its tally: a failed verdict, a ⚠️ cell or
// a cell left unjudged is 1; WARN is 1 only under --strict.
func ExampleExitCode() {
	run := &state.BatteryRun{
		Status: state.RunCompleted,
		Plan:   scoring.Plan{InView: "gemma"},
		Counts: state.Tally{Completed: 3, Pass: 2, Warn: 1, Judged: 3, ToJudge: 3},
	}
	fmt.Println(state.ExitCode(run, false), state.ExitCode(run, true))
	// Output: 0 1
}
