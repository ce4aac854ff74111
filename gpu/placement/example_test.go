package placement_test

import (
	"fmt"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
)

// Two servers, each with one model loaded and two free slots, and a queue
// of both models' jobs: each job goes where its model is already resident,
// so nothing is loaded and nothing is evicted.
func ExamplePolicy() {
	server := func(name, resident string) placement.ServerView {
		return placement.ServerView{
			Name: name, Up: true, Slots: 2, JIT: true,
			Offered:  map[string]bool{"qwen3-8b": true, "gemma-3-12b": true},
			Resident: map[string]bool{resident: true},
		}
	}
	var queue []placement.JobView
	for i, m := range []string{"qwen3-8b", "gemma-3-12b", "qwen3-8b", "gemma-3-12b"} {
		queue = append(queue, placement.JobView{ID: uint64(i + 1), Model: m, Purpose: chat.PurposeInference})
	}
	view := placement.FleetView{
		Now:     time.Unix(0, 0),
		Servers: []placement.ServerView{server("gpu0", "gemma-3-12b"), server("gpu1", "qwen3-8b")},
		Queue:   queue,
	}

	for _, a := range placement.Default.Place(view) {
		fmt.Printf("job %d (%s) on %s\n", a.Job, queue[a.Job-1].Model, a.Server)
	}
	// Unordered output:
	// job 1 (qwen3-8b) on gpu1
	// job 2 (gemma-3-12b) on gpu0
	// job 3 (qwen3-8b) on gpu1
	// job 4 (gemma-3-12b) on gpu0
}

// The drain guard: a server never loads a model where that would evict one
// still streaming. The job waits while qwen3-8b streams, and is placed
// once it has drained.
func ExamplePlacer_drainGuard() {
	gpu := placement.ServerView{
		Name: "gpu0", Up: true, Slots: 2, Busy: 1, JIT: true,
		VRAMTotalGB: 24, VRAMUsedGB: 20,
		Offered:   map[string]bool{"qwen3-8b": true, "gemma-3-12b": true},
		Resident:  map[string]bool{"qwen3-8b": true},
		Streaming: map[string]int{"qwen3-8b": 1},
	}
	view := placement.FleetView{
		Now:     time.Unix(0, 0),
		Servers: []placement.ServerView{gpu},
		Queue:   []placement.JobView{{ID: 7, Model: "gemma-3-12b", Purpose: chat.PurposeInference}},
		Models:  map[string]placement.ModelView{"qwen3-8b": {SizeGB: 20}, "gemma-3-12b": {SizeGB: 10}},
	}
	fmt.Println("streaming:", placement.Default.Place(view))

	view.Servers[0].Busy, view.Servers[0].Streaming = 0, nil
	fmt.Println("drained:", placement.Default.Place(view))
	// Output:
	// streaming: []
	// drained: [{7 gpu0 }]
}
