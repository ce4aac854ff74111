package ui

import (
	"pitwall/judge/scoring"
	"pitwall/runner/state"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// sceneVersus is sceneSide run again: one reply fixed, one broken, one
// scored differently, the rest as they were.
func sceneVersus() (a, b *state.BatteryRun) {
	a, b = sceneSide(), sceneSide()
	b.ID = "20261122-090000-cd34"
	set(b, 1, 2, 0, func(c *state.Cell) {
		c.EditReply().Output = `{"name": "Ada", "age": 36}`
		c.EditReply().Checks = []scoring.CheckResult{{Name: "is-json", Pass: true}, {Name: "has-name", Pass: true}}
	}, judged(scoring.JuryName, scoring.Pass, 0.9))
	set(b, 1, 3, 0, func(c *state.Cell) {
		c.EditReply().Output = "I cannot share personal data."
		c.EditReply().Checks = []scoring.CheckResult{{Name: "is-json", Reason: "the reply is not JSON"}, {Name: "has-name", Reason: "no name"}}
	}, judged(scoring.JuryName, scoring.Fail, 0.1))
	set(b, 1, 0, 0, judged(scoring.JuryName, scoring.Fail, 0.35))
	return a, b
}

func TestVersusGolden(t *testing.T) {
	t.Parallel()
	a, b := sceneVersus()
	tests := []struct {
		name string
		o    VersusOptions
	}{
		{"versus_changed", VersusOptions{}},
		{"versus_picked", VersusOptions{Tests: []string{"json_schema_reply"}, Models: []string{"granite-4.0-micro", "google/gemma-3-12b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.o.JudgeA, tt.o.JudgeB, tt.o.Width = scoring.JuryName, scoring.JuryName, 120
			got := ansi.Strip(RenderVersus(a, b, tt.o))
			for i, l := range strings.Split(got, "\n") {
				if w := ansi.WcWidth.StringWidth(l); w > 120 {
					t.Errorf("line %d is %d columns wide: %q", i+1, w, l)
				}
			}
			golden(t, tt.name, got)
		})
	}
}

// What changed between the runs is said in words: the outcome, the score,
// each check that changed; an unchanged cell is left out unless asked for.
func TestVersusSaysWhatChanged(t *testing.T) {
	t.Parallel()
	a, b := sceneVersus()
	got := ansi.Strip(RenderVersus(a, b, VersusOptions{JudgeA: scoring.JuryName, JudgeB: scoring.JuryName, Width: 200}))
	for _, want := range []string{
		"json_schema_reply × google/gemma-3-12b · J-ERR → PASS · is-json now passes",
		"json_schema_reply × llama-3.1-8b-instruct · PASS → FAIL · score 0.65 → 0.10 (-0.55) · has-name now fails · is-json now fails",
		"json_schema_reply × qwen/qwen3-8b · score 0.50 → 0.35 (-0.15)",
		"3 cells changed, 21 unchanged of 24 cells both runs have",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "× granite-4.0-micro") {
		t.Errorf("an unchanged cell is shown:\n%s", got)
	}
}
