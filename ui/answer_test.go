package ui

import (
	"pitwall/runner/state"
	"strings"
	"testing"
	"time"
)

// A key that cannot act says why in the status line, rather than nothing.
func TestEveryKeyAnswers(t *testing.T) {
	t.Parallel()
	noJudge := func() *state.BatteryRun {
		run := next(makeRun(2, 2, 1))
		for ti := range 2 {
			for mi := range 2 {
				set(run, ti, mi, 0, completed(time.Second, 30))
			}
		}
		finish(run, state.RunCompleted)
		return run
	}
	tests := []struct {
		name   string
		run    func() *state.BatteryRun
		noCtrl bool
		keys   []string
		want   string
	}{
		{"r on a failed cell", sceneJudged, false, []string{"j", "j", "j", "j", "l", "r"}, "r: this cell failed its checks (❌)"},
		{"r on an errored cell", sceneJudged, false, []string{"j", "j", "j", "j", "j", "l", "l", "r"}, "r: this cell's inference errored (⚠️); pitwall retry RUN"},
		{"r on a cancelled cell", sceneJudged, false, []string{"j", "j", "j", "j", "j", "l", "l", "l", "r"}, "r: this cell was cancelled"},
		{"r on a pending cell", sceneMidInference, false, []string{"j", "j", "j", "r"}, "r: this cell's inference has not completed yet"},
		{"r in the detail of a failed cell", sceneJudged, false, []string{"j", "j", "j", "j", "l", "enter", "r"}, "r: this cell failed its checks"},
		{"s after the end", sceneJudged, false, []string{"s"}, "s: the run has ended; nothing to stop"},
		{"R with no judge", noJudge, false, []string{"R"}, "R: the run has no judge configured; its checks alone decide"},
		{"J with no judge", noJudge, false, []string{"J"}, "J: the run has no judge configured to choose"},
		{"r with no judge", noJudge, false, []string{"r"}, "r: the run has no judge configured"},
		{"e on a run only shown", sceneJudged, true, []string{"e"}, "e: this run is only shown here; pitwall export RUN writes it"},
		{"s on a run only shown", sceneMidInference, true, []string{"s"}, "s: this run is only shown here"},
		{"esc with no filter", sceneJudged, false, []string{"esc"}, "esc: no / filter to clear"},
		{"a key of no use", sceneJudged, false, []string{"z"}, "z: not a key of the grid; ? lists them"},
		{"a key before the run", func() *state.BatteryRun { return nil }, false, []string{"j"}, "j: waiting for the run's first snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ctrl Controller = newFakeCtrl(nil)
			if tt.noCtrl {
				ctrl = nil
			}
			m := testModel(120, 24, Options{}, ctrl)
			if run := tt.run(); run != nil {
				show(m, run)
			}
			press(m, tt.keys...)
			got := drawn(m)
			if !strings.Contains(got, tt.want) {
				t.Fatalf("status does not say %q:\n%s", tt.want, got)
			}
			// The next key clears it.
			press(m, "k")
			if strings.Contains(drawn(m), tt.want) {
				t.Errorf("the answer outlives the next key:\n%s", drawn(m))
			}
		})
	}
}
