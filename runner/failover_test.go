package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/simspec"
	"pitwall/gpu/telemetry"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func TestAServerDyingMidRunLosesNoCellAndRunsNoneTwice(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, `
[run]
timeout = "20s"
retries = 1
repeat = 5

[sim]
time_scale = 0.02

[[sim.models]]
name = "good"
skill = 1.0
tokens_per_sec = 40
[[sim.models]]
name = "bad"
skill = 0.01
tokens_per_sec = 40

[[servers]]
name = "gpu0"
kind = "sim"
slots = 2
models = ["good", "bad"]

[[servers]]
name = "gpu1"
kind = "sim"
slots = 2
models = ["good", "bad"]
`)
	h := newHarness(t, cfg, false)
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill gpu1 once work is running on it.
	crashed := false
	for s := range h.run.Snapshots() {
		for _, srv := range s.Fleet {
			if srv.Name == "gpu1" && srv.Busy > 0 && s.Counts.Done() > 2 {
				h.sims.Server("gpu1").Crash()
				crashed = true
			}
		}
		if crashed || s.Final {
			break
		}
	}
	if !crashed {
		t.Fatal("the run ended before gpu1 had work to lose")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := h.run.Wait(ctx)
	if !b.Final || b.Status != state.RunCompleted {
		t.Fatalf("run %s final=%v %+v", b.Status, b.Final, b.Counts)
	}
	if b.Counts.Completed+b.Counts.Failed != len(b.Tests)*len(b.Models)*5 {
		t.Errorf("cells %+v: every cell should end completed or failed on the surviving server", b.Counts)
	}
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	completed := map[string]int{}
	failedOver := 0
	for _, q := range reqs {
		if q.Purpose != ledger.PurposeInference {
			continue
		}
		if q.Status == ledger.StatusCompleted {
			completed[fmt.Sprintf("%s/%s/%d", q.Model, q.Test, q.Repeat)]++
		}
		if q.Status == ledger.StatusError && q.Server == "gpu1" {
			failedOver++
		}
	}
	for cell, n := range completed {
		if n > 1 {
			t.Errorf("cell %s completed %d times", cell, n)
		}
	}
	if failedOver == 0 {
		t.Error("the ledger shows no attempt lost on gpu1")
	}

	// gpu1 comes back and the fleet sees it rejoin.
	if err := h.sims.Server("gpu1").Restart(); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	if _, err := h.fleet.WaitState(wctx, func(servers []telemetry.ServerState) bool {
		for _, s := range servers {
			if s.Name == "gpu1" && s.Up {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("gpu1 did not rejoin: %v %+v", err, h.fleet.State())
	}
}

func TestACutStreamIsCutAndRetriedOnce(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet)
	cfg.Run.Retries = 3
	cfg.Servers[0].Sim = &simspec.Server{Faults: simspec.Faults{CutRate: 1}}
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	for ti := range b.Tests {
		for mi := range b.Models {
			c := b.Cell(ti, mi, 0)
			if c.Status != state.Errored || c.Said().ErrorClass != chat.ClassCut || c.Attempts != 2 {
				t.Errorf("%s × %s: %s %s after %d attempts, want ⚠️ cut after 2 (retried once)", c.Model, c.Test, c.Status, c.Said().ErrorClass, c.Attempts)
			}
		}
	}
}

func TestAHangEndsAtTheTimeout(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet)
	cfg.Run.Retries = 0
	cfg.Run.Timeout = 200 * time.Millisecond
	cfg.Servers[0].Sim = &simspec.Server{Faults: simspec.Faults{HangRate: 1}}
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	for ti := range b.Tests {
		for mi := range b.Models {
			if c := b.Cell(ti, mi, 0); c.Status != state.Errored || c.Said().ErrorClass != chat.ClassTimeout {
				t.Errorf("%s × %s: %s %s, want ⚠️ timeout", c.Model, c.Test, c.Status, c.Said().ErrorClass)
			}
		}
	}
}

func TestAFailedRequestKeepsItsTiming(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet+"\n")
	cfg.Run.Retries = 0
	cfg.Servers[0].Sim = &simspec.Server{Faults: simspec.Faults{CutRate: 1}}
	h := newHarness(t, cfg, false)
	b := h.finish(t)
	if b.Counts.Errored == 0 {
		t.Fatalf("no cut stream: %+v", b.Counts)
	}
	x := h.export(t)
	for _, c := range x.Cells {
		if c.Status == "error" && c.LatencyMS <= 0 && c.TTFTMS <= 0 {
			t.Errorf("%s × %s: a cut stream exported with no timing", c.Model, c.Test)
		}
	}
	for _, q := range x.Requests {
		if q.Purpose == "inference" && q.Status == "error" && q.LatencyMS <= 0 && q.TTFTMS <= 0 {
			t.Errorf("request %d: a cut stream exported with latency 0", q.ID)
		}
	}
}
