package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/gpu/simspec"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// gatherFor sets the gathering's bounds for one test.
func gatherFor(t *testing.T, max int, window time.Duration) {
	t.Helper()
	oldMax, oldWindow := batchGatherMax, batchGatherWindow
	batchGatherMax, batchGatherWindow = max, window
	t.Cleanup(func() { batchGatherMax, batchGatherWindow = oldMax, oldWindow })
}

// wordsConfig is testConfig with a battery of n tests that ask for n
// different words: n distinct judge requests per model, where repeats of
// one test would share theirs.
func wordsConfig(t *testing.T, body string, n int) *config.Config {
	t.Helper()
	dir := t.TempDir()
	var battery strings.Builder
	for i := range n {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"word-%d\"\nuser = \"Say the word blue%d.\"\nreference = \"blue%d\"\n", i, i, i)
		fmt.Fprintf(&battery, "  [[tests.checks]]\n  type = \"icontains\"\n  value = \"blue%d\"\n\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(battery.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pitwall.toml")
	head := "name = \"test\"\nbattery = \"battery.toml\"\nmodels = [\"good\", \"bad\"]\ndb = " +
		quote(filepath.Join(dir, "ledger.db")) + "\n"
	if err := os.WriteFile(path, []byte(head+body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// A pipelined run submits each completed cell's judging on its own; a
// batch judge gathers them, so the provider sees a handful of batches,
// not one per cell.
func TestPipelinedBatchJudgingGathersCellsIntoFewBatches(t *testing.T) {
	cases := []struct {
		name   string
		max    int
		window time.Duration
		// want is how many batches n judged cells may make, at most and
		// at least.
		want func(n int) (most, least int)
	}{
		{"a batch each time max have gathered", 3, time.Hour,
			func(n int) (int, int) { return (n+2)/3 + 1, (n + 2) / 3 }},
		{"one batch when inference ends first", 1000, time.Hour,
			func(int) (int, int) { return 1, 1 }},
		{"no window: a batch per cell, as submitted", 1000, 0,
			func(n int) (int, int) { return n, n }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gatherFor(t, tc.max, tc.window)
			cfg := wordsConfig(t, batchJudgeFleet, 12)
			cfg.Run.Judging = "pipelined"
			h := newHarness(t, cfg, true)
			b := h.finish(t)
			allJudged(t, b)
			n := b.Counts.ToJudge
			if n < 6 {
				t.Fatalf("%d cells to judge: the test needs more than a few", n)
			}
			batches := h.sims.Server("api").Batches()
			total := 0
			for _, bi := range batches {
				total += bi.Total
				if bi.Total > tc.max || bi.Status != "completed" {
					t.Errorf("batch %s: %s with %d requests; want completed, at most %d", bi.ID, bi.Status, bi.Total, tc.max)
				}
			}
			most, least := tc.want(n)
			if len(batches) > most || len(batches) < least || total != n {
				t.Errorf("%d batches holding %d requests for %d judged cells; want %d to %d batches holding them all",
					len(batches), total, n, least, most)
			}
			for _, q := range judgeRows(t, h.led, b.ID) {
				if q.Status != ledger.StatusCompleted || q.BatchID == "" || q.Attempt != 1 {
					t.Errorf("row %d: %s batch %q attempt %d; want answered by a batch at once", q.ID, q.Status, q.BatchID, q.Attempt)
				}
			}
		})
	}
}

// batchHangFleet is batchJudgeFleet with the weak model on a server of
// its own, which the tests below make hang: inference stays open while
// the strong model's cells are judged.
const batchHangFleet = `
[run]
timeout = "60s"
retries = 0
judging = "pipelined"

[[sim.models]]
name = "good"
skill = 1.0
[[sim.models]]
name = "bad"
skill = 0.01
[[sim.models]]
name = "judge"
judge_error_rate = 0.0

[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["good"]

[[servers]]
name = "gpu1"
kind = "sim"
slots = 4
models = ["bad"]

[[servers]]
name = "api"
kind = "sim"
slots = 4
models = ["judge"]

[[scoring.judges]]
name = "j"
model = "judge"
server = "api"
batch = true
`

// waitFor reads the run's snapshots until ok holds, or fails the test.
func waitFor(t *testing.T, r *Run, what string, ok func(*state.BatteryRun) bool) *state.BatteryRun {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case b := <-r.Snapshots():
			if ok(b) {
				return b
			}
			if b.Final {
				t.Fatalf("the run ended before %s: %+v", what, b.Counts)
			}
		case <-deadline:
			t.Fatalf("no snapshot shows %s", what)
		}
	}
}

// The window sends what has gathered while inference is still held up:
// no more requests come, yet the batch goes.
func TestAGatheringBatchGoesWhenItsWindowEnds(t *testing.T) {
	gatherFor(t, 1000, 20*time.Millisecond)
	h := newHarness(t, testConfig(t, batchHangFleet), true)
	h.sims.Server("gpu1").SetFaults(simspec.Faults{HangRate: 1})
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	b := waitFor(t, h.run, "a verdict while inference runs", func(b *state.BatteryRun) bool {
		return b.Counts.Judged > 0 && b.Phase == state.PhaseInference
	})
	if b.Counts.Running+b.Counts.Queued == 0 {
		t.Errorf("judged with no inference left: %+v", b.Counts)
	}
	if len(h.sims.Server("api").Batches()) == 0 {
		t.Errorf("no batch at the provider, yet a verdict")
	}
	h.run.Stop()
}

// A stop settles what was gathering as cancelled, without a batch: the run
// ends rather than waiting on requests no batch will answer.
func TestAStopSettlesAGatheringBatch(t *testing.T) {
	gatherFor(t, 1000, time.Hour)
	h := newHarness(t, testConfig(t, batchHangFleet), true)
	h.sims.Server("gpu1").SetFaults(simspec.Faults{HangRate: 1})
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h.run, "judging gathering while inference runs", func(b *state.BatteryRun) bool {
		return b.JudgeInFlight > 0 && b.Counts.Completed == 4 && b.Phase == state.PhaseInference
	})
	h.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := h.run.Wait(ctx)
	if !b.Final || b.Status != state.RunStopped || b.JudgeInFlight != 0 {
		t.Fatalf("after the stop: final %v, %s, %d judge requests in flight; want it stopped, none", b.Final, b.Status, b.JudgeInFlight)
	}
	if n := len(h.sims.Server("api").Batches()); n != 0 {
		t.Errorf("%d batches created for a gathering the stop ended", n)
	}
	rows := judgeRows(t, h.led, b.ID)
	if len(rows) == 0 {
		t.Fatal("no judge rows: the gathered requests were not in the ledger")
	}
	for _, q := range rows {
		if q.Status != ledger.StatusCanceled || q.BatchID != "" {
			t.Errorf("row %d: %s batch %q; want canceled, in no batch", q.ID, q.Status, q.BatchID)
		}
	}
}
