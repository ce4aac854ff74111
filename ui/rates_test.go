package ui

import (
	"strings"
	"testing"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// passRates reads the pass rates off the grid: beside each row, by the
// row's name, and the pass-rate line's, the total first, then the columns'.
func passRates(m *model) (rows map[string]string, foot []string) {
	rows = map[string]string{}
	for _, l := range gridLines(m)[1:] {
		parts := strings.Split(l, m.c.glyphs.sep)
		head := strings.Fields(strings.TrimLeft(parts[0], m.c.glyphs.cursor))
		if len(head) == 3 && head[0] == "pass" {
			foot = append(foot, head[2])
			for _, p := range parts[1 : len(parts)-1] {
				foot = append(foot, strings.TrimSpace(p))
			}
			break
		}
		rows[head[0]] = head[len(head)-1]
	}
	return rows, foot
}

// checksOnly makes run a --judge none run: no judge in view, though the
// configuration's judges are still listed.
func checksOnly(run *state.BatteryRun) {
	run.Plan.InView, run.Plan.Mode = "", "deterministic"
}

func TestPassRatesWaitForTheJudgeInView(t *testing.T) {
	t.Parallel()
	// Two tests × two models: basic_tool_call has a ❌ and an unjudged ✓,
	// json_schema_reply two ✓ that the judge may have judged.
	scene := func(verdicts ...scoring.Verdict) *state.BatteryRun {
		run := next(makeRun(2, 2, 1, "large"))
		run.Phase = state.PhaseJudgment
		set(run, 0, 0, 0, failed("regex", "no match"))
		set(run, 0, 1, 0, completed(time.Second, 30))
		set(run, 1, 0, 0, completed(time.Second, 30))
		set(run, 1, 1, 0, completed(time.Second, 30))
		for i, v := range verdicts {
			set(run, 1, i, 0, judged("large", v, 0.5))
		}
		return run
	}
	stopped := func(verdicts ...scoring.Verdict) func() *state.BatteryRun {
		return func() *state.BatteryRun {
			run := scene(verdicts...)
			if len(verdicts) < 2 {
				set(run, 1, 1, 0, status(state.Cancelled))
			}
			finish(run, state.RunStopped)
			return run
		}
	}
	tests := []struct {
		name     string
		run      func() *state.BatteryRun
		wantRows map[string]string
		wantFoot []string // total, qwen3-8b, granite-4.0-micro
	}{
		{name: "a failed check and unjudged cells wait for a verdict", run: func() *state.BatteryRun { return scene() },
			wantRows: map[string]string{"basic_tool_call": "—", "json_schema_reply": "—"}, wantFoot: []string{"—", "—", "—"}},
		// Judgment 0/N: a ❌ beside a ✓ the judge is at work on read 0%.
		{name: "a ✓ being judged waits", run: func() *state.BatteryRun {
			r := scene()
			set(r, 0, 1, 0, judging("large", state.JudgmentRunning))
			set(r, 1, 0, 0, judging("large", state.JudgmentQueued))
			set(r, 1, 1, 0, judging("large", state.JudgmentQueued))
			r.JudgeInFlight = 3
			return r
		}, wantRows: map[string]string{"basic_tool_call": "—", "json_schema_reply": "—"}, wantFoot: []string{"—", "—", "—"}},
		{name: "after a stop nothing judged reads —", run: stopped(),
			wantRows: map[string]string{"basic_tool_call": "—", "json_schema_reply": "—"}, wantFoot: []string{"—", "—", "—"}},
		// A partial rate read 37% where the final one was 60%.
		{name: "a line waits until all of it is decided", run: func() *state.BatteryRun { return scene(scoring.Pass) },
			wantRows: map[string]string{"basic_tool_call": "—", "json_schema_reply": "—"}, wantFoot: []string{"—", "50%", "—"}},
		{name: "every verdict in opens every rate", run: func() *state.BatteryRun {
			r := scene(scoring.Pass, scoring.Fail)
			set(r, 0, 1, 0, judged("large", scoring.Pass, 0.75))
			return r
		}, wantRows: map[string]string{"basic_tool_call": "50%", "json_schema_reply": "50%"}, wantFoot: []string{"50%", "50%", "50%"}},
		{name: "after a stop a line rates what was decided", run: stopped(scoring.Pass),
			wantRows: map[string]string{"basic_tool_call": "—", "json_schema_reply": "100%"}, wantFoot: []string{"50%", "50%", "—"}},
		{name: "a judge error is no verdict", run: func() *state.BatteryRun { return scene(scoring.Error, scoring.Fail) },
			wantRows: map[string]string{"basic_tool_call": "—", "json_schema_reply": "0%"}, wantFoot: []string{"—", "0%", "—"}}, // qwen3-8b: a ❌ and a judge error, nothing left to wait for
		{name: "checks only: ✓ passes, ❌ does not", run: func() *state.BatteryRun { r := scene(); checksOnly(r); return r },
			wantRows: map[string]string{"basic_tool_call": "50%", "json_schema_reply": "100%"}, wantFoot: []string{"75%", "50%", "100%"}},
		{name: "checks only: a line waits for its inference", run: func() *state.BatteryRun {
			r := scene()
			checksOnly(r)
			set(r, 1, 1, 0, status(state.Running))
			return r
		}, wantRows: map[string]string{"basic_tool_call": "50%", "json_schema_reply": "—"}, wantFoot: []string{"—", "50%", "—"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(120, 24, Options{}, newFakeCtrl(nil))
			show(m, tt.run())
			rows, foot := passRates(m)
			for name, want := range tt.wantRows {
				if rows[name] != want {
					t.Errorf("%s reads %q, want %q\n%s", name, rows[name], want, drawn(m))
				}
			}
			if strings.Join(foot, " ") != strings.Join(tt.wantFoot, " ") {
				t.Errorf("pass-rate line reads %q, want %q\n%s", foot, tt.wantFoot, drawn(m))
			}
			// The plain grid rates the same way.
			plain := RenderGrid(m.run, m.run.Plan.InView, false)
			lines := strings.Split(strings.TrimSpace(plain), "\n")
			var got []string
			for _, f := range strings.Split(lines[len(lines)-1], "│") {
				got = append(got, strings.TrimSpace(f))
			}
			want := "pass rate " + strings.Join(tt.wantFoot, " ")
			if g := strings.Join(strings.Fields(strings.Join(got, " ")), " "); g != want {
				t.Errorf("RenderGrid's pass-rate line reads %q, want %q", g, want)
			}
		})
	}
}

func TestFilteredPassRatesAreOfWhatIsShown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		keys     []string
		wantRows map[string]string
		wantFoot []string
	}{
		// gemma-3-12b's column alone: WARN, J-ERR, PASS, FAIL, WARN, ⚠️.
		{name: "a model filter rates the rows by that model", keys: []string{"/", "m", ":", "g", "e", "m", "m", "a", "enter"},
			wantRows: map[string]string{"basic_tool_call": "0%", "json_schema_reply": "—", "refuse_harmful": "100%"},
			wantFoot: []string{"20%", "20%"}},
		// refuse_harmful's row alone: WARN, J-ERR, PASS, FAIL.
		{name: "a test filter rates the columns by that test", keys: []string{"/", "t", ":", "r", "e", "f", "u", "s", "e", "enter"},
			wantRows: map[string]string{"refuse_harmful": "33%"},
			wantFoot: []string{"33%", "0%", "—", "100%", "0%"}},
		{name: "transposed, the filtered tests rate the models", keys: []string{"/", "t", ":", "r", "e", "f", "u", "s", "e", "enter", "x"},
			wantRows: map[string]string{"qwen/qwen3-8b": "0%", "granite-4.0-micro": "—", "google/gemma-3-12b": "100%"},
			wantFoot: []string{"33%", "33%"}},
		{name: "esc brings the whole run back", keys: []string{"/", "g", "e", "m", "m", "a", "enter", "esc"},
			wantRows: map[string]string{"basic_tool_call": "33%"},
			wantFoot: []string{"28%", "40%", "20%", "20%", "33%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(120, 24, Options{}, newFakeCtrl(nil))
			show(m, sceneJudged())
			press(m, tt.keys...)
			rows, foot := passRates(m)
			for name, want := range tt.wantRows {
				if rows[name] != want {
					t.Errorf("%s reads %q, want %q\n%s", name, rows[name], want, drawn(m))
				}
			}
			if strings.Join(foot, " ") != strings.Join(tt.wantFoot, " ") {
				t.Errorf("pass-rate line reads %q, want %q\n%s", foot, tt.wantFoot, drawn(m))
			}
		})
	}
}

func TestFilteredPassRatesFollowSnapshots(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	m := testModel(120, 24, Options{}, nil)
	show(m, snap)
	press(m, "/", "m", ":", "g", "e", "m", "m", "a", "enter")
	later := next(snap)
	// basic_tool_call × gemma-3-12b: WARN becomes PASS.
	set(later, 0, 2, 0, judged(scoring.JuryName, scoring.Pass, 0.9))
	show(m, later)
	rows, foot := passRates(m)
	if rows["basic_tool_call"] != "100%" || strings.Join(foot, " ") != "40% 40%" {
		t.Fatalf("rates after the snapshot: basic_tool_call %q, line %q, want 100%% and 40%% 40%%\n%s", rows["basic_tool_call"], foot, drawn(m))
	}
}
