package gpu

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
)

// The queue keeps the jobs that have not left, in order, each beside its
// view, whether the ones that left were at the front or anywhere.
func TestCompactKeepsTheQueueInOrderBesideItsViews(t *testing.T) {
	for _, gone := range [][]int{{}, {0}, {0, 1, 2}, {0, 1, 2, 3, 4, 5}, {3}, {0, 2}, {1, 5}, {5}, {1, 2, 4}, {0, 3, 4}, {0, 1, 2, 3, 5}, {2, 3}} {
		f := &Fleet{byID: map[uint64]*fleetJob{}}
		for i := range 6 {
			q := &fleetJob{id: uint64(i), job: &Job{Request: chat.Request{Model: fmt.Sprint(i)}, Purpose: chat.PurposeInference}}
			f.queue = append(f.queue, q)
			f.views = append(f.views, placement.JobView{Model: q.job.Request.Model})
			f.byID[q.id] = q
		}
		for _, i := range gone {
			f.leaveQueueLocked(f.queue[i], false)
		}
		f.compactLocked()
		var want []string
		for i := range 6 {
			if !slices.Contains(gone, i) {
				want = append(want, fmt.Sprint(i))
			}
		}
		var got, views []string
		for i, q := range f.queue {
			got = append(got, q.job.Request.Model)
			views = append(views, f.views[i].Model)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(views) != fmt.Sprint(want) || f.goneN != 0 || f.dirty {
			t.Errorf("gone %v: queue %v, views %v (goneN %d dirty %v), want %v", gone, got, views, f.goneN, f.dirty, want)
		}
		// And again after more leave and come.
		if len(f.queue) > 0 {
			f.leaveQueueLocked(f.queue[len(f.queue)-1], false)
			f.compactLocked()
			if len(f.queue) != len(want)-1 || len(f.views) != len(f.queue) {
				t.Errorf("gone %v then the last: %d jobs, %d views", gone, len(f.queue), len(f.views))
			}
		}
	}
}

// BenchmarkCompactScattered is a large run's queue at a dispatch: a
// window of 4,096 jobs, model after model, with the first job of every
// model gone (placement takes each model's first).
func BenchmarkCompactScattered(b *testing.B) {
	const window, perModel = 4096, 41
	f := &Fleet{byID: map[uint64]*fleetJob{}}
	for b.Loop() {
		b.StopTimer()
		f.queue, f.views = f.queue[:0], f.views[:0]
		for i := range window {
			q := &fleetJob{id: uint64(i), job: &Job{Request: chat.Request{Model: fmt.Sprint(i / perModel)}, Purpose: chat.PurposeInference}}
			f.queue = append(f.queue, q)
			f.views = append(f.views, placement.JobView{ID: q.id, Model: q.job.Request.Model})
			f.byID[q.id] = q
		}
		for i := 0; i < window; i += perModel {
			f.leaveQueueLocked(f.queue[i], false)
		}
		b.StartTimer()
		f.compactLocked()
	}
}

// TestFleetCountsAreItsQueue: the counts a fleet hands its policy
// (FleetView.Counts) are its queue's, at every decision, while jobs come,
// start, are cancelled queued, time out and are dropped by Close; and
// nothing is left counted after Close.
func TestFleetCountsAreItsQueue(t *testing.T) {
	srv := oaiHangingServer(t)
	var mu sync.Mutex
	var wrong []string
	decisions := 0
	checking := placement.PolicyFunc(func(v placement.FleetView) []placement.Assignment {
		want := placement.CountQueue(v.Queue)
		mu.Lock()
		decisions++
		if fmt.Sprint(v.Counts) != fmt.Sprint(want) {
			wrong = append(wrong, fmt.Sprintf("counts %v, queue %v", v.Counts, want))
		}
		mu.Unlock()
		return placement.Default.Place(v)
	})
	servers := []ServerConfig{
		{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 2, Models: []string{"m", "j"}},
		{Config: client.Config{Name: "gpu1", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 2, Models: []string{"m", "n"}},
	}
	f := NewFleet(servers, Options{Policy: checking})
	var jobs []*trackedJob
	var cancels []context.CancelFunc
	for i := range 150 {
		content := fmt.Sprint("job", i)
		if i%9 == 0 {
			content = fmt.Sprint("hang", i)
		}
		tj := trackJob([]string{"m", "n", "j"}[i%3], content)
		if i%3 == 2 {
			tj.job.Purpose = chat.PurposeJudge
		}
		if i%5 == 4 {
			tj.job.Pin = "gpu1"
			tj.job.Request.Model = "m"
		}
		tj.job.Steps = i % 4
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		switch {
		case i%9 == 0:
			tj.job.Timeout = 20 * time.Millisecond // a hang ends by its timeout
		case i%6 == 1:
			go cancel() // cancelled at some moment, queued or not
		case i%6 == 3:
			tj.job.Timeout = time.Millisecond
		}
		jobs = append(jobs, tj)
		f.Submit(ctx, tj.job)
	}
	for _, tj := range jobs[:100] {
		tj.wait(t)
	}
	f.Close() // the rest, queued or running, are dropped
	for _, c := range cancels {
		c()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(wrong) > 0 {
		t.Fatalf("%d of %d decisions were handed counts that are not the queue's; the first: %s", len(wrong), decisions, wrong[0])
	}
	if decisions < 20 {
		t.Fatalf("only %d decisions: the test checked too few", decisions)
	}
	f.mu.Lock()
	left := len(f.counts)
	f.mu.Unlock()
	if left != 0 {
		t.Fatalf("after Close, %d keys are still counted: %v", left, f.counts)
	}
}
