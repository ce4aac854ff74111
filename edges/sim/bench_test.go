package sim

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"
)

// BenchmarkChatInstant measures the simulator's own cost per streamed
// completion (about 120 tokens, usage included) with every delay zero: the
// ceiling it puts on benchmarks of pitwall's scheduler and client.
func BenchmarkChatInstant(b *testing.B) {
	cfg := instant("m")
	cfg.Slots = 8
	s := start(b, cfg)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr}
	req := body("m", "Explain continuous batching.", map[string]any{
		"stream": true, "stream_options": map[string]any{"include_usage": true},
	})
	b.ReportAllocs()
	b.SetParallelism(4)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(req))
			if err != nil {
				b.Error(err)
				return
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || n == 0 {
				b.Errorf("status %d, %d bytes, %v", resp.StatusCode, n, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if got := s.Stats().Served["m"]; got != int64(b.N) {
		b.Errorf("served %d of %d", got, b.N)
	}
}
