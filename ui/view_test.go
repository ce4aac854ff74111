package ui

import (
	"pitwall/runner/state"
	"strings"
	"testing"
)

func repeatKeys(k string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = k
	}
	return keys
}

func TestViewGolden(t *testing.T) {
	t.Parallel()
	exit1 := func(*state.BatteryRun) int { return 1 }
	cat := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	tests := []struct {
		name string
		w, h int
		opts Options
		run  func() *state.BatteryRun
		keys []string
	}{
		{name: "grid_empty", w: 120, h: 24, run: func() *state.BatteryRun { return makeRun(3, 5, 1, "gemma") }},
		{name: "grid_mid_inference", w: 120, h: 24, run: sceneMidInference},
		{name: "all_servers_down", w: 120, h: 24, run: sceneAllDown},
		{name: "grid_judged", w: 120, h: 20, opts: Options{ExitCode: exit1}, run: sceneJudged},
		{name: "grid_scrolled", w: 100, h: 30, run: func() *state.BatteryRun { return sceneBig(30, 200) },
			keys: cat(repeatKeys("pgdown", 4), []string{"j", "j"}, repeatKeys("l", 9))},
		{name: "grid_repeats", w: 100, h: 16, run: sceneRepeats},
		{name: "detail_failed", w: 100, h: 40, run: sceneJudged, keys: []string{"j", "j", "j", "j", "l", "enter"}},
		{name: "detail_errored", w: 100, h: 40, run: sceneJudged, keys: []string{"j", "j", "j", "j", "j", "l", "l", "enter"}},
		{name: "detail_jury", w: 100, h: 48, run: sceneJudged, keys: []string{"enter"}},
		{name: "help", w: 100, h: 36, opts: Options{LogPath: "/home/me/.pitwall/pitwall.log"}, run: sceneJudged, keys: []string{"?"}},
		{name: "help_narrow", w: 60, h: 20, run: sceneMidInference, keys: []string{"?"}},
		{name: "ascii", w: 80, h: 24, opts: Options{ASCII: true}, run: sceneMidInference},
		{name: "ascii_judged", w: 80, h: 20, opts: Options{ASCII: true, ExitCode: exit1}, run: sceneJudged},
		{name: "warn_alignment", w: 160, h: 20, run: sceneWarnings},
		// The width goes to the names: test ids, models, servers, GPUs.
		{name: "wide", w: 200, h: 20, run: sceneWide},
		{name: "wide_cut", w: 120, h: 20, run: sceneWide},
		{name: "detail_long_id", w: 80, h: 24, run: sceneLongID, keys: []string{"enter"}},
		{name: "picker_none", w: 100, h: 16, run: sceneJudged, keys: []string{"J", "j"}},
		{name: "confirm_interrupt", w: 100, h: 16, run: sceneMidInference, keys: []string{"ctrl+c"}},
		{name: "help_bottom", w: 100, h: 24, run: sceneMidInference, keys: []string{"?", "G"}},
		{name: "too_small", w: 50, h: 12, run: sceneMidInference},
		{name: "smallest", w: 60, h: 15, run: sceneMidInference},
		{name: "figures_latency", w: 120, h: 20, run: sceneMidInference, keys: []string{"t"}},
		{name: "figures_tps", w: 120, h: 20, run: sceneMidInference, keys: []string{"t", "t", "t"}},
		{name: "transposed", w: 120, h: 20, run: sceneJudged, keys: []string{"x"}},
		{name: "picker", w: 100, h: 16, run: sceneJudged, keys: []string{"J", "k"}},
		{name: "filter_failures", w: 120, h: 20, run: sceneMidInference, keys: []string{"f"}},
		{name: "filter_disagreements", w: 120, h: 20, run: sceneJudged, keys: []string{"f", "f", "f", "x"}},
		{name: "filter_name_typing", w: 120, h: 20, run: sceneJudged, keys: []string{"/", "g", "e", "m", "m", "a"}},
		{name: "confirm_stop", w: 100, h: 16, run: sceneMidInference, keys: []string{"s"}},
		{name: "waiting", w: 80, h: 16, run: func() *state.BatteryRun { return nil }},
		// Critical tests are marked in the test column, ASCII too, and
		// /sev:critical keeps them; the detail view names the severity.
		{name: "grid_severity", w: 120, h: 16, run: sceneSeverity},
		{name: "grid_severity_ascii", w: 80, h: 16, opts: Options{ASCII: true}, run: sceneSeverity},
		{name: "filter_severity", w: 120, h: 16, run: sceneSeverity, keys: []string{"/", "s", "e", "v", ":", "c", "r", "i", "t", "enter"}},
		{name: "filter_severity_hint", w: 120, h: 16, run: sceneSeverity, keys: []string{"/"}},
		{name: "transposed_severity", w: 120, h: 16, run: sceneSeverity, keys: []string{"x"}},
		{name: "detail_severity", w: 100, h: 16, run: sceneSeverity, keys: []string{"enter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(tt.w, tt.h, tt.opts, newFakeCtrl(nil))
			if run := tt.run(); run != nil {
				show(m, run)
			}
			press(m, tt.keys...)
			got := drawn(m)
			if n := strings.Count(got, "\n") + 1; n != tt.h {
				t.Errorf("frame has %d lines, want %d", n, tt.h)
			}
			for i, l := range strings.Split(got, "\n") {
				if w := m.c.wm.StringWidth(l); w > tt.w {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, tt.w, l)
				}
			}
			golden(t, tt.name, got)
		})
	}
}
