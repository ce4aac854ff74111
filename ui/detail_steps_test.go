package ui

import (
	"strings"
	"testing"
)

func TestAgentTrajectoryGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w, h int
		opts Options
		keys []string
	}{
		// The loop answered, one call unmocked.
		{name: "detail_agent", w: 100, h: 56, keys: []string{"enter"}},
		{name: "detail_agent_ascii", w: 80, h: 60, opts: Options{ASCII: true}, keys: []string{"enter"}},
		// The loop stagnated: its reason is on top.
		{name: "detail_agent_stagnation", w: 100, h: 40, keys: []string{"l", "enter"}},
		// A cell at work on its third model turn shows it in the grid.
		{name: "grid_agent", w: 100, h: 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(tt.w, tt.h, tt.opts, newFakeCtrl(nil))
			show(m, sceneAgent())
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
