package runner

import (
	"context"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// slowOne is one slot on one server, decoding slowly enough that a stop
// lands mid-inference, with a judge.
const slowOne = `
[run]
timeout = "30s"
retries = 0
[sim]
time_scale = 0.01
[[sim.models]]
name = "good"
skill = 1.0
tokens_per_sec = 60
[[sim.models]]
name = "bad"
skill = 0.01
tokens_per_sec = 60
[[sim.models]]
name = "judge"
judge_error_rate = 0.0
[[servers]]
name = "gpu0"
kind = "sim"
slots = 1
models = ["good", "bad", "judge"]
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`

// completedInference counts, per cell, the inference requests of a run
// that completed.
func completedInference(t *testing.T, led *ledger.Ledger, id string) map[ledger.CellKey]int {
	t.Helper()
	reqs, err := led.Requests(id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[ledger.CellKey]int{}
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeInference && q.Status == ledger.StatusCompleted {
			out[ledger.CellKey{Model: q.Model, Test: q.Test, Repeat: q.Repeat}]++
		}
	}
	return out
}

func TestResumeAfterAStopSendsNothingTwiceAndEndsAsAnUnstoppedRun(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, ledgerOn func(*config.Config)) {
		cfg := testConfig(t, slowOne)
		ledgerOn(cfg)
		h := newHarness(t, cfg, false)
		w := &watch{t: t, run: h.run}
		if err := h.run.Start(); err != nil {
			t.Fatal(err)
		}
		w.until("some cells done", func(b *state.BatteryRun) bool { return b.Counts.Done() >= 3 })
		h.run.Stop()
		stopped := w.until("the stop", func(b *state.BatteryRun) bool { return b.Final })
		if stopped.Status != state.RunStopped || stopped.Counts.Cancelled == 0 {
			t.Fatalf("the stop left %s %+v; the test needs cancelled cells", stopped.Status, stopped.Counts)
		}
		h.run.Close()
		before := h.sims.Server("gpu0").Stats().Requests

		run, err := Resume(cfg, h.run.ID(), Again{Cancelled: true}, Options{Fleet: h.fleet, Ledger: h.led,
			Interval: 5 * time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond }})
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		if run.ID() != h.run.ID() {
			t.Fatalf("resumed as run %s, want the same id %s", run.ID(), h.run.ID())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resumed := run.Wait(ctx)
		if !resumed.Final || resumed.Status != state.RunCompleted || resumed.Counts.Done() != resumed.Counts.Cells() {
			t.Fatalf("resumed run ended %s %+v", resumed.Status, resumed.Counts)
		}
		for cell, n := range completedInference(t, h.led, run.ID()) {
			if n != 1 {
				t.Errorf("cell %v: %d completed inference requests, want 1 (nothing paid twice)", cell, n)
			}
		}
		sent := h.sims.Server("gpu0").Stats().Requests - before
		// The resumed run sends the cancelled cells' inference (plus warm-ups)
		// and judges; never the cells that completed before the stop.
		if max := int64(stopped.Counts.Cancelled+stopped.Counts.Pending+stopped.Counts.Queued) + int64(resumed.Counts.ToJudge) + 4; sent > max {
			t.Errorf("the resumed run sent %d requests, more than the %d left to do", sent, max)
		}

		// A run of the same config that never stopped ends the same, cell for cell.
		whole := newHarness(t, testConfig(t, slowOne), true).finish(t)
		x, err := history.BuildExport(h.led, run.ID(), "")
		if err != nil {
			t.Fatal(err)
		}
		if x.Run.Status != "completed" {
			t.Errorf("the ledger says %s after the resume", x.Run.Status)
		}
		for ti := range whole.Rows {
			for i, want := range whole.Rows[ti].Cells {
				got := resumed.Rows[ti].Cells[i]
				wv, gv := want.Judgment("j"), got.Judgment("j")
				if got.Status != want.Status || got.Said().Output != want.Said().Output || (wv == nil) != (gv == nil) || wv != nil && wv.Verdict != gv.Verdict {
					t.Errorf("%s × %s: resumed %s %q %v, uninterrupted %s %q %v", got.Model, got.Test, got.Status, got.Said().Output, gv, want.Status, want.Said().Output, wv)
				}
			}
		}
	})
}

func TestRetryRunsErrorsAgainAsNewAttempts(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, slowOne)
	h := newHarness(t, cfg, true)
	h.sims.Server("gpu0").SetFaults(specFaultsAll500())
	b := h.finish(t)
	if b.Counts.Errored == 0 {
		t.Fatalf("no ⚠️ cells to retry: %+v", b.Counts)
	}
	h.run.Close()
	h.sims.Server("gpu0").SetFaults(specNoFaults())
	run, err := Resume(cfg, h.run.ID(), Again{Errors: true}, Options{Fleet: h.fleet, Ledger: h.led, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	after := run.Wait(ctx)
	if after.Counts.Errored != 0 || after.Counts.Completed+after.Counts.Failed != after.Counts.Cells() {
		t.Fatalf("after the retry: %+v", after.Counts)
	}
	reqs, _ := h.led.Requests(run.ID())
	attempts := map[int]bool{}
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeInference {
			attempts[q.Attempt] = true
		}
	}
	if !attempts[1] || !attempts[2] {
		t.Errorf("inference attempts in the ledger %v: want the first tries and the retries beside them", attempts)
	}
}
