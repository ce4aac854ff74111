package ui

import (
	"pitwall/runner/state"
	"strings"
	"testing"
)

// Every question the status line asks is drawn whole at every width down
// to the smallest: the cost and the [y/N] included, wrapped onto more lines
// where one is too short.
func TestPromptsAreNeverCutOff(t *testing.T) {
	t.Parallel()
	estimate := func(refs []state.CellRef, judge string, samples int) (int, float64, bool, bool) {
		return 1234 * len(refs) * samples, 0.00071 * float64(len(refs)*samples), true, true
	}
	prompts := []struct {
		name string
		run  func() *state.BatteryRun
		keys []string
		want []string // in the question, whole
	}{
		{"quit", sceneMidInference, []string{"q"}, []string{"Quit? The run is still going and will be stopped. [y/N]"}},
		{"interrupt", sceneMidInference, []string{"ctrl+c"}, []string{"Interrupt? The run stops and pitwall exits 130. [y/N]"}},
		{"stop", sceneMidInference, []string{"s"}, []string{"Stop the run? In-flight work is cancelled. [y/N]"}},
		{"rejudge_all", sceneJudged, []string{"R"}, []string{"Re-judge 21 cells with jury? 42 judge calls, ~25,914 tokens, ~$0.015;",
			"verdicts now, kept until the new ones are in. [y/N]"}},
		{"rejudge_cell", sceneJudged, []string{"j", "l", "r"}, []string{"Re-judge granite-4.0-micro × json_schema_reply with jury? 2 judge calls, ~1,234 tokens, ~$0.00071;",
			"kept until the new ones are in. [y/N]"}},
		{"export", sceneJudged, []string{"e"}, []string{"Export the run as? j json · c csv · m md · h html · u junit · t text (enter json; any other key: none)"}},
	}
	for _, w := range []int{60, 80, 120} {
		for _, p := range prompts {
			name := "prompt_" + p.name + "_" + itoa(w)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				const h = 16
				m := testModel(w, h, Options{Ledger: ledgerFuncs{estimate: estimate}}, newFakeCtrl(nil))
				show(m, p.run())
				cmd := press(m, p.keys...)
				if p.name == "rejudge_all" || p.name == "rejudge_cell" {
					run(m, cmd) // the estimate arrives
				}
				got := drawn(m)
				lines := strings.Split(got, "\n")
				if len(lines) != h {
					t.Errorf("frame has %d lines, want %d", len(lines), h)
				}
				for i, l := range lines {
					if lw := m.c.wm.StringWidth(l); lw > w {
						t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, lw, w, l)
					}
				}
				// The question sits under the progress line, one line or more.
				var q []string
				for _, l := range lines[2:m.headerLines] {
					q = append(q, strings.TrimSpace(l))
				}
				asked := strings.Join(q, " ")
				for _, want := range p.want {
					if !strings.Contains(asked, want) {
						t.Errorf("the question %q does not say %q whole:\n%s", asked, want, got)
					}
				}
				if strings.Contains(asked, "…") {
					t.Errorf("the question is cut: %q", asked)
				}
				golden(t, name, got)
			})
		}
	}
}
