package runner

import (
	"context"
	"pitwall/edges/sim"
	"strings"
	"testing"
	"time"

	"pitwall/gpu"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
	"pitwall/runner/state"
)

// goneForGood puts model "bad" alone on gpu1, which the test kills; "good"
// and the judge stay on gpu0.
const goneForGood = `
[run]
timeout = "10s"
retries = 1
max_wait = "2s"    # long enough that a loaded machine still shows the wait before it ends
[sim]
time_scale = 0.02
[[sim.models]]
name = "good"
skill = 1.0
[[sim.models]]
name = "bad"
skill = 1.0
tokens_per_sec = 5
[[sim.models]]
name = "judge"
judge_error_rate = 0.0
[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["good", "judge"]
[[servers]]
name = "gpu1"
kind = "sim"
slots = 1
models = ["bad"]
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`

func TestARunEndsByItselfWhenAServerIsGoneForGood(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, goneForGood)
	sims, err := sim.StartConfig(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sims.Close() })
	led, err := ledger.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	servers, err := setup.FleetServers(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	fleet := gpu.NewFleet(servers, gpu.Options{MaxWait: cfg.Run.MaxWait, ProbeInterval: 50 * time.Millisecond,
		ProbeBackoffMin: 10 * time.Millisecond, ProbeBackoffMax: 50 * time.Millisecond, ProbeTimeout: time.Second})
	t.Cleanup(fleet.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fleet.Discover(ctx)
	run, err := New(cfg, Options{Fleet: fleet, Ledger: led, Interval: 5 * time.Millisecond, Heartbeat: 20 * time.Millisecond,
		Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	w := &watch{t: t, run: run}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	w.until("bad running on gpu1", func(b *state.BatteryRun) bool {
		for _, row := range b.Rows {
			for _, c := range row.Cells {
				if c.Model == "bad" && c.Status == state.Running {
					return true
				}
			}
		}
		return false
	})
	killed := time.Now()
	sims.Server("gpu1").Crash()
	b := w.until("work shown waiting on gpu1", func(b *state.BatteryRun) bool {
		s := b.Stranded()
		return len(s) == 1 && s[0].Name == "gpu1" && !s[0].DownSince.IsZero()
	})
	if b.Final {
		t.Fatal("the run ended before its waiting work gave up")
	}
	b = w.until("the end", func(b *state.BatteryRun) bool { return b.Final })
	if took := time.Since(killed); took > cfg.Run.MaxWait+5*time.Second {
		t.Errorf("the run ended %s after the server died; max_wait is %s", took, cfg.Run.MaxWait)
	}
	if !allTerminal(b) {
		t.Fatalf("cells left open: %+v", b.Counts)
	}
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			switch c.Model {
			case "bad":
				if c.Status != state.Errored || c.Said().ErrorClass != "unavailable" || !strings.Contains(c.Said().Error, "max_wait") {
					t.Errorf("bad × %s: %s %s %q, want an unavailable error that names max_wait", c.Test, c.Status, c.Said().ErrorClass, c.Said().Error)
				}
			case "good":
				if c.Status != state.Completed || c.Judgment("j") == nil || c.Judgment("j").Status != state.JudgmentDone {
					t.Errorf("good × %s: %s, judged %v: the other model's cells must be judged", c.Test, c.Status, c.Judgment("j"))
				}
			}
		}
	}
	if b.Status != state.RunCompleted || state.ExitCode(b, false) != state.ExitFail {
		t.Errorf("status %s, exit %d; want completed with exit 1 (cells errored)", b.Status, state.ExitCode(b, false))
	}
}
