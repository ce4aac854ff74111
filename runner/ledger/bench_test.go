package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRequestLifecycle measures the ledger's cost per request: the
// three writes (insert, start, finish) every request makes, each committed.
// requests/s is the ceiling the ledger puts on a fleet's request rate;
// rows/s counts row writes (three per request).
func BenchmarkRequestLifecycle(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	input := `[{"role":"user","content":"What is the capital of France? Answer in one word."}]`
	output := outputFor(1, 512)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		r := Request{RunID: "bench", Purpose: PurposeInference, Model: "qwen3-8b", Test: "t1",
			Attempt: 1, Input: input, Params: `{"temperature":0,"seed":42}`}
		if _, err := l.InsertRequest(&r); err != nil {
			b.Fatal(err)
		}
		if err := l.StartRequest(r.ID, "gpu0", time.Now()); err != nil {
			b.Fatal(err)
		}
		r.Status, r.Output, r.PromptTokens, r.CompletionTokens = StatusCompleted, output, 20, 120
		r.TTFT, r.Latency = 80*time.Millisecond, 2*time.Second
		if err := l.FinishRequest(&r); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(3*float64(n)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkHeartbeat measures what keeping a run alive costs: one indexed
// update, committed, every HeartbeatEvery.
func BenchmarkHeartbeat(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	now := time.Now()
	if err := l.CreateRun(RunRow{ID: "bench", Status: RunRunning, Owner: l.Self(), Heartbeat: now}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		if err := l.Heartbeat("bench", now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunsReadingLiveRuns measures what the liveness check adds to a
// read: 100 runs, as `pitwall runs` lists them, finished or running under
// a live process of this host (a kill(pid, 0) each) or another's.
func BenchmarkRunsReadingLiveRuns(b *testing.B) {
	for _, live := range []int{0, 100} {
		b.Run(fmt.Sprintf("%d of 100 running", live), func(b *testing.B) {
			l, err := Open(filepath.Join(b.TempDir(), "ledger.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			now := time.Now()
			for i := range 100 {
				r := RunRow{ID: fmt.Sprintf("r%03d", i), Status: "completed", StartedAt: now, Heartbeat: now,
					Owner: Owner{PID: os.Getppid(), Host: l.Self().Host}}
				if i < live {
					r.Status = RunRunning
					if i%2 == 1 {
						r.Owner.Host = "elsewhere"
					}
				}
				if err := l.CreateRun(r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				runs, err := l.Runs(0)
				if err != nil || len(runs) != 100 || (live > 0 && runs[0].Status != RunRunning) {
					b.Fatalf("%d runs, %v", len(runs), err)
				}
			}
		})
	}
}
