package gpu

import (
	"fmt"
	"slices"
	"testing"

	"pitwall/gpu/chat"
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
