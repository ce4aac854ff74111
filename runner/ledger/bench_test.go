package ledger

import (
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
