package ui

import (
	"strings"
	"testing"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// pickerLine is the picker's line for the judge named, as drawn.
func pickerLine(t *testing.T, m *model, name string) string {
	t.Helper()
	for _, l := range strings.Split(drawn(m), "\n") {
		if f := strings.Fields(strings.TrimLeft(l, " "+m.c.glyphs.cursor)); len(f) > 0 && f[0] == name {
			return l
		}
	}
	t.Fatalf("the picker has no line for %s:\n%s", name, drawn(m))
	return ""
}

func TestPickerCountsFollowSnapshots(t *testing.T) {
	t.Parallel()
	// 4 × 4 completed, gemma judging: 3 verdicts when the picker opens.
	snap := next(makeRun(4, 4, 1, "gemma", "llama"))
	for tt := range 4 {
		for mm := range 4 {
			set(snap, tt, mm, 0, completed(time.Second, 30))
		}
	}
	snap.Phase, snap.JudgeInFlight = state.PhaseJudgment, 13
	for i := range 3 {
		set(snap, 0, i, 0, judged("gemma", scoring.Pass, 0.9))
	}
	m := testModel(100, 20, Options{}, newFakeCtrl(snap))
	show(m, snap)
	press(m, "J")
	if got := pickerLine(t, m, "gemma"); !strings.Contains(got, "3/16 judged") {
		t.Fatalf("gemma's line on opening: %q", got)
	}
	// Nine more verdicts of gemma's and one of llama's arrive while it is
	// open: it read 3/16 while the header said 12/16.
	later := next(snap)
	for i := 3; i < 12; i++ {
		set(later, i/4, i%4, 0, judged("gemma", scoring.Pass, 0.9))
	}
	set(later, 3, 3, 0, judged("llama", scoring.Fail, 0.1))
	show(m, later)
	if got := pickerLine(t, m, "gemma"); !strings.Contains(got, "12/16 judged") {
		t.Errorf("gemma's line after the snapshot: %q\n%s", got, drawn(m))
	}
	if got := pickerLine(t, m, "llama"); !strings.Contains(got, "1/16 judged") {
		t.Errorf("llama's line after the snapshot: %q", got)
	}
	// A verdict taken back (a re-judge queued again) comes off the count.
	again := next(later)
	set(again, 0, 0, 0, judging("gemma", state.JudgmentQueued))
	show(m, again)
	if got := pickerLine(t, m, "gemma"); !strings.Contains(got, "11/16 judged") {
		t.Errorf("gemma's line after a verdict went back to the queue: %q", got)
	}
	if !strings.Contains(drawn(m), "Judgment 11/16") {
		t.Errorf("the header disagrees with the picker:\n%s", drawn(m))
	}
}

func TestPickerPutsNoJudgeInView(t *testing.T) {
	t.Parallel()
	snap := sceneJudged() // the jury in view
	ctrl := newFakeCtrl(snap)
	m := testModel(120, 24, Options{}, ctrl)
	show(m, snap)
	press(m, "J")
	if got := pickerLine(t, m, "none"); !strings.Contains(got, "checks only") {
		t.Fatalf("the picker's none line: %q", got)
	}
	// gemma, llama, jury (in view), none.
	if cmd := press(m, "j", "enter"); cmd != nil {
		t.Fatalf("choosing none asked the controller for something: %#v", cmd())
	}
	if m.judge != "" || len(ctrl.switched) != 0 {
		t.Fatalf("judge in view %q, switched %v; want none and no switch", m.judge, ctrl.switched)
	}
	got := drawn(m)
	if !strings.Contains(got, "checks only") || strings.Contains(got, "PASS 0") || strings.Contains(got, "judge jury") {
		t.Fatalf("the grid still shows a judge:\n%s", got)
	}
	// ✓ cells count as passes: 21 completed of 23 decided (a ❌ and a ⚠️;
	// the ⊘ is no decision).
	if _, foot := passRates(m); len(foot) == 0 || foot[0] != "91%" {
		t.Fatalf("pass-rate line %q, want 91%% first\n%s", foot, got)
	}
	// A snapshot does not bring the runner's judge back.
	show(m, next(snap))
	if m.judge != "" || !strings.Contains(drawn(m), "checks only") {
		t.Fatalf("a snapshot put %q back in view", m.judge)
	}
	// And J goes back to a judge.
	run(m, press(m, "J", "k", "enter"))
	if m.judge != scoring.JuryName || !strings.Contains(drawn(m), "judge jury") {
		t.Fatalf("J, k, enter from none put %q in view", m.judge)
	}
}
