package ui

import (
	"strings"
	"testing"
	"time"

	"pitwall/gpu/telemetry"
	"pitwall/runner/state"
)

// fleetLines are the fleet panel's lines on screen, server by server.
func fleetLines(m *model, servers []telemetry.ServerState) []string {
	var out []string
	for _, l := range strings.Split(drawn(m), "\n") {
		for _, s := range servers {
			if strings.HasPrefix(strings.TrimLeft(l, " ●✗"), s.Name+" ") {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestDoneScreenShowsTheFleetIdle(t *testing.T) {
	t.Parallel()
	m, now := clocked(120, 30)
	mid := sceneMidInference()
	show(m, mid)
	if got := strings.Join(fleetLines(m, mid.Fleet), "\n"); !strings.Contains(got, "87%") || !strings.Contains(got, "slots 2/2") {
		t.Fatalf("mid-run, the fleet should show its sample (87%%, slots 2/2):\n%s", got)
	}
	// The run ends; its last snapshot still carries the mid-run sample.
	*now = now.Add(time.Minute)
	end := next(mid)
	finish(end, state.RunCompleted)
	show(m, end)
	lines := fleetLines(m, end.Fleet)
	if len(lines) != len(end.Fleet) {
		t.Fatalf("%d fleet lines for %d servers:\n%s", len(lines), len(end.Fleet), drawn(m))
	}
	for _, l := range lines {
		if strings.Contains(l, "down") {
			continue
		}
		for _, busy := range []string{"87%", "40%", "50%", "█", "tok/s", "loading", "queue 5"} {
			if strings.Contains(l, busy) {
				t.Errorf("a finished run's fleet shows %q: %q", busy, l)
			}
		}
		if !strings.Contains(l, " 0%") || !strings.Contains(l, "slots 0/") {
			t.Errorf("a finished run's fleet should show 0%% and no slot busy: %q", l)
		}
	}
	// Judge work after the end busies the fleet again: it is not idle then.
	again := next(end)
	again.JudgeInFlight = 3
	show(m, again)
	if got := strings.Join(fleetLines(m, again.Fleet), "\n"); !strings.Contains(got, "87%") {
		t.Errorf("while judges work after the end, the fleet shows its sample:\n%s", got)
	}
}

func TestHeaderSaysModelsLoadWhileNothingCompleted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fleet []telemetry.ServerState // what the servers say they load
		cells map[int]string          // model index → cells in it loading
		want  string
	}{
		{name: "from the cells", cells: map[int]string{0: "x", 1: "x", 2: "x"}, want: "loading 3 models"},
		{name: "from the fleet", fleet: []telemetry.ServerState{
			{Name: "gpu0", Up: true, Slots: 2, Loading: "m0"}, {Name: "gpu1", Up: true, Slots: 2, Loading: "m1"},
			{Name: "gpu2", Up: false, Loading: "m2"}}, want: "loading 2 models"},
		{name: "a model counted once", cells: map[int]string{1: "x"}, fleet: []telemetry.ServerState{
			{Name: "gpu0", Up: true, Slots: 2, Loading: "m1"}}, want: "loading 1 model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, now := clocked(160, 30)
			run := next(makeRun(4, 40, 1, "gemma"))
			run.Started = t0
			show(m, run)
			*now = t0.Add(25 * time.Second)
			loads := next(run)
			for mi := range tt.cells {
				for ti := range 3 {
					set(loads, ti, mi, 0, status(state.Loading))
				}
			}
			for i := range tt.fleet {
				tt.fleet[i].Loading = loads.Models[int(tt.fleet[i].Loading[1]-'0')]
			}
			loads.Fleet = tt.fleet
			show(m, loads)
			got := progressLine(m)
			if !strings.Contains(got, tt.want) || strings.Contains(got, "cells/min") {
				t.Errorf("header should say %q, and no cells/min: %q", tt.want, got)
			}
			// Once cells complete, the rate is back.
			*now = now.Add(30 * time.Second)
			done := next(loads)
			for ti := range 4 {
				set(done, ti, 3, 0, completed(time.Second, 30))
			}
			show(m, done)
			if got := progressLine(m); !strings.Contains(got, "cells/min") {
				t.Errorf("with cells done the rate should be back: %q", got)
			}
		})
	}
}
