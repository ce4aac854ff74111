package state

import (
	"testing"

	"pitwall/judge/scoring"
)

func cellWith(status CellStatus, verdicts map[string]scoring.Verdict) Cell {
	c := Cell{Status: status}
	for judge, v := range verdicts {
		j := &Judgment{Judge: judge, Status: JudgmentDone, Verdict: v}
		if v == "" {
			j.Status = JudgmentRunning
		}
		SetJudgment(&c, j)
	}
	return c
}

func TestTallyCountsEachCellOnce(t *testing.T) {
	row := NewRow([]Cell{
		cellWith(Pending, nil), cellWith(Queued, nil), cellWith(Loading, nil), cellWith(Running, nil),
		cellWith(Completed, map[string]scoring.Verdict{"a": scoring.Pass, "b": scoring.Fail}),
		cellWith(Completed, map[string]scoring.Verdict{"a": scoring.Warn}),
		cellWith(Completed, map[string]scoring.Verdict{"a": scoring.Error}),
		cellWith(Completed, map[string]scoring.Verdict{"a": ""}), // being judged
		cellWith(Failed, map[string]scoring.Verdict{"a": scoring.Pass}),
		cellWith(Errored, nil), cellWith(Cancelled, nil),
	})
	got := TallyRows([]*Row{row}, "a")
	want := Tally{Pending: 1, Queued: 1, Loading: 1, Running: 1, Completed: 4, Failed: 1, Errored: 1, Cancelled: 1,
		Pass: 1, Warn: 1, JudgeError: 1, Judged: 3, ToJudge: 4}
	if got != want {
		t.Errorf("tally for a:\n got %+v\nwant %+v", got, want)
	}
	if got.Cells() != len(row.Cells) || got.Done() != 7 || got.Waiting() != 3 {
		t.Errorf("Cells %d Done %d Waiting %d", got.Cells(), got.Done(), got.Waiting())
	}
	if b := TallyRows([]*Row{row}, "b"); b.Fail != 1 || b.Judged != 1 || b.ToJudge != 4 {
		t.Errorf("tally for b: %+v", b)
	}
	if none := TallyRows([]*Row{row}, ""); none.ToJudge != 0 || none.Judged != 0 || none.Completed != 4 {
		t.Errorf("tally with no judge: %+v", none)
	}
	// Adding and taking back leaves nothing; Merge is Add's sum.
	var back Tally
	back.AddRow(row, "a", 1)
	back.Merge(got, -1)
	if back != (Tally{}) {
		t.Errorf("Merge(-1) of the same rows left %+v", back)
	}
}

func TestExitCode(t *testing.T) {
	done := func(c Tally, inView string, status RunStatus) *BatteryRun {
		return &BatteryRun{Status: status, Counts: c, Plan: scoring.Plan{InView: inView}}
	}
	for _, tt := range []struct {
		name   string
		b      *BatteryRun
		strict bool
		want   int
	}{
		{"no snapshot", nil, false, ExitSetup},
		{"failed run", done(Tally{Completed: 1}, "", RunFailed), false, ExitSetup},
		{"stopped run", done(Tally{Completed: 1}, "", RunStopped), false, ExitFail},
		{"checks pass", done(Tally{Completed: 2}, "", RunCompleted), false, ExitOK},
		{"a check failed", done(Tally{Completed: 1, Failed: 1}, "", RunCompleted), false, ExitFail},
		{"an error cell", done(Tally{Completed: 1, Errored: 1}, "", RunCompleted), false, ExitFail},
		{"a cell not done", done(Tally{Completed: 1, Queued: 1}, "", RunCompleted), false, ExitFail},
		{"judge passes all", done(Tally{Completed: 2, Pass: 2, Judged: 2, ToJudge: 2}, "j", RunCompleted), false, ExitOK},
		{"judge fails one", done(Tally{Completed: 2, Pass: 1, Fail: 1, Judged: 2, ToJudge: 2}, "j", RunCompleted), false, ExitFail},
		{"a judge error", done(Tally{Completed: 2, Pass: 1, JudgeError: 1, Judged: 2, ToJudge: 2}, "j", RunCompleted), false, ExitFail},
		{"unjudged cell", done(Tally{Completed: 2, Pass: 1, Judged: 1, ToJudge: 2}, "j", RunCompleted), false, ExitFail},
		{"warn passes", done(Tally{Completed: 2, Pass: 1, Warn: 1, Judged: 2, ToJudge: 2}, "j", RunCompleted), false, ExitOK},
		{"warn fails under strict", done(Tally{Completed: 2, Pass: 1, Warn: 1, Judged: 2, ToJudge: 2}, "j", RunCompleted), true, ExitFail},
	} {
		if got := ExitCode(tt.b, tt.strict); got != tt.want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.want)
		}
	}
}
