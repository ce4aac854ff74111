package gpu

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
)

// oaiBenchStream is one streamed completion of about 50 chunks, as a local
// server would send it.
func oaiBenchStream(model string) string {
	var b strings.Builder
	for i := range 48 {
		fmt.Fprintf(&b, "data: %s\n\n", oaiContent(model, fmt.Sprintf("tok%d ", i)))
	}
	fmt.Fprintf(&b, "data: %s\n\n", oaiFinish(model, "stop"))
	fmt.Fprintf(&b, "data: %s\n\n", oaiUsage(model, 30, 48))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func BenchmarkClientChat(b *testing.B) {
	body := oaiBenchStream("bench-model")
	srv := oaiServer(b, func(w http.ResponseWriter, r *http.Request) {
		oaiDecode(r)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	})
	c := client.New(client.Config{Name: "bench", URL: srv.URL + "/v1"}, nil)
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

// BenchmarkFleetJob measures a job's whole way through the fleet (queue,
// placement, slot, client, Done) against a server that answers at once.
func BenchmarkFleetJob(b *testing.B) {
	body := oaiBenchStream("bench-model")
	srv := oaiServer(b, func(w http.ResponseWriter, r *http.Request) {
		oaiDecode(r)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	})
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "bench", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 4, Models: []string{"bench-model"}}}, Options{})
	defer f.Close()
	done := make(chan error, 64)
	job := func() *Job {
		return &Job{Request: chat.Request{Model: "bench-model", Messages: []chat.Message{{Role: "user", Content: "Count."}}},
			Purpose: chat.PurposeInference, Done: func(_ chat.Result, err error) { done <- err }}
	}
	b.ReportAllocs()
	b.ResetTimer()
	// Keep 8 jobs in the fleet: 4 running, 4 queued.
	inFlight := 0
	for i := 0; i < b.N; i++ {
		if inFlight == 8 {
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			inFlight--
		}
		f.Submit(context.Background(), job())
		inFlight++
	}
	for ; inFlight > 0; inFlight-- {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}
