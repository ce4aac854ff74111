package client

import (
	"context"
	"net/http"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"
)

func BenchmarkClientChat(b *testing.B) {
	body := oaitest.BenchStream("bench-model")
	srv := oaitest.Server(b, func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	})
	c := New(Config{Name: "bench", URL: srv.URL + "/v1"}, nil)
	defer c.CloseIdleConnections()
	req := chat.Request{Model: "bench-model", Messages: []chat.Message{{Role: "user", Content: "Count."}},
		Temperature: valuePtr(0.0), Seed: valuePtr(1), MaxTokens: 64}
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Chat(context.Background(), req)
		if err != nil || res.CompletionTokens != 48 {
			b.Fatalf("Chat: %v (%d tokens)", err, res.CompletionTokens)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
