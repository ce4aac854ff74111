package gpu

import (
	"context"
	"net/http"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

// BenchmarkFleetJob measures a job's whole way through the fleet (queue,
// placement, slot, client, Done) against a server that answers at once.
func BenchmarkFleetJob(b *testing.B) {
	body := oaitest.BenchStream("bench-model")
	srv := oaitest.Server(b, func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
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
