package runner

import (
	"context"
	"testing"
	"time"

	"pitwall/runner/state"
)

// busiest watches server's queued and running jobs until stop is closed,
// and returns the most seen at once.
func busiest(h *harness, server string, stop <-chan struct{}) <-chan int {
	out := make(chan int, 1)
	go func() {
		most := 0
		for {
			for _, s := range h.fleet.State() {
				if s.Name == server {
					most = max(most, s.Queue+s.Busy)
				}
			}
			select {
			case <-stop:
				out <- most
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	return out
}

// Phase two plans judge work as the window allows: the judge server's
// queue never holds more than the window, and every cell is judged.
func TestJudgingIsFedThroughAWindow(t *testing.T) {
	// Put back after the harness's cleanup has closed the run (cleanups
	// run last first), whose loop reads the window to its end.
	w := judgeWindow
	t.Cleanup(func() { judgeWindow = w })
	judgeWindow = 6
	const tests, models = 30, 10 // 300 cells, one judge input per test
	h := newHarness(t, loadConfig(t, sameAnswers(t, tests, models, "")), true)
	stop := make(chan struct{})
	most := busiest(h, "judges", stop)
	b := h.finish(t)
	close(stop)
	got := <-most
	if b.Counts.Judged != b.Counts.Completed || b.Counts.Completed == 0 {
		t.Fatalf("%d of %d completed cells judged", b.Counts.Judged, b.Counts.Completed)
	}
	if b.JudgeInFlight != 0 {
		t.Fatalf("the final snapshot has %d judge samples in flight", b.JudgeInFlight)
	}
	if got > judgeWindow || got == 0 {
		t.Fatalf("the judge server held up to %d jobs at once, want 1 to %d (the window)", got, judgeWindow)
	}
}

// A run larger than the inference window is handed to the fleet a window
// at a time, model by model: every cell runs, the fleet never holds more
// than the window, and a stop cancels what was never handed over.
func TestInferenceIsFedThroughAWindow(t *testing.T) {
	w := inferenceWindow
	t.Cleanup(func() { inferenceWindow = w }) // after the run is closed, as above
	inferenceWindow = 7
	const tests, models = 12, 5
	h := newHarness(t, loadConfig(t, sameAnswers(t, tests, models, "")), true)
	stop := make(chan struct{})
	most := busiest(h, "gpu0", stop)
	b := h.finish(t)
	close(stop)
	if got := <-most; got > inferenceWindow || got == 0 {
		t.Fatalf("the fleet held up to %d inference jobs at once, want 1 to %d (the window)", got, inferenceWindow)
	}
	if b.Counts.Cells() != tests*models || b.Counts.Done() != tests*models || b.Counts.Completed == 0 {
		t.Fatalf("counts %+v, want all %d cells done", b.Counts, tests*models)
	}

	// Stopped after the first cells: the rest end cancelled, none pending.
	h = newHarness(t, loadConfig(t, sameAnswers(t, tests, models, "")), false)
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	for b := range h.run.Snapshots() {
		if b.Counts.Done() > 0 {
			break
		}
	}
	h.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b = h.run.Wait(ctx)
	if !b.Final || b.Status != state.RunStopped {
		t.Fatalf("run %s (final %v) after a stop", b.Status, b.Final)
	}
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if !c.Status.Terminal() {
				t.Fatalf("%s × %s is %s after the stop", c.Model, c.Test, c.Status)
			}
		}
	}
	if b.Counts.Cancelled == 0 {
		t.Fatalf("no cell cancelled by the stop: %+v", b.Counts)
	}
}
