package ui

import (
	"pitwall/judge/scoring"
	"pitwall/runner/state"
	"strings"
	"testing"
)

// sceneSide is sceneJudged with replies and checks in the json_schema_reply
// row, to read side by side.
func sceneSide() *state.BatteryRun {
	run := sceneJudged()
	replies := []string{`{"name": "Ada", "age": 36}`, `{"name":"Ada","age":"36"}`, "Here is the JSON you asked for:\n{\"name\": \"Ada\"}", `{"name": "Ada", "age": 36, "city": "London"}`}
	for mi, r := range replies {
		set(run, 1, mi, 0, func(c *state.Cell) {
			c.EditReply().Output = r
			c.EditReply().Checks = []scoring.CheckResult{{Name: "is-json", Pass: mi != 2, Reason: "text before the JSON"}, {Name: "has-name", Pass: true}}
		})
	}
	return run
}

func TestSideBySideGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w, h int
		keys []string
	}{
		{"side_by_side", 120, 24, []string{"j", "v"}},
		{"side_by_side_moved", 120, 24, []string{"j", "v", "l"}},
		{"side_by_side_narrow", 80, 20, []string{"j", "v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := testModel(tt.w, tt.h, Options{}, newFakeCtrl(nil))
			show(m, sceneSide())
			press(m, tt.keys...)
			got := drawn(m)
			lines := strings.Split(got, "\n")
			if len(lines) != tt.h {
				t.Errorf("frame has %d lines, want %d", len(lines), tt.h)
			}
			for i, l := range lines {
				if w := m.c.wm.StringWidth(l); w > tt.w {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, tt.w, l)
				}
			}
			golden(t, tt.name, got)
		})
	}
}

// v on a row shows every model's reply to that test with its verdict,
// checks and latency; esc goes back to the grid.
func TestSideBySideShowsEveryModelsReply(t *testing.T) {
	t.Parallel()
	run := sceneSide()
	m := testModel(160, 30, Options{}, newFakeCtrl(nil))
	show(m, run)
	press(m, "j", "v")
	got := drawn(m)
	if m.screen != screenSide {
		t.Fatalf("v did not open the side-by-side view:\n%s", got)
	}
	for _, want := range []string{"json_schema_reply × 4 models", "qwen3-8b", "granite-4.0-micro", "gemma-3-12b",
		`{"name": "Ada", "age": 36}`, "Here is the JSON you asked for:", "❌ is-json", "✓ has-name", "text before the JSON",
		"FAIL 0.50", "WARN 0.55", "latency"} {
		if !strings.Contains(got, want) {
			t.Errorf("side by side lacks %q:\n%s", want, got)
		}
	}
	press(m, "esc")
	if m.screen != screenGrid {
		t.Error("esc did not go back to the grid")
	}
	// A filter the grid keeps decides the models shown.
	press(m, "/", "m", ":", "g", "e", "m", "m", "a", "enter", "v")
	if got := drawn(m); !strings.Contains(got, "× 1 model ") || strings.Contains(got, "qwen3-8b") {
		t.Errorf("side by side does not follow the grid's filter:\n%s", got)
	}
}
