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
	for _, gone := range [][]int{{}, {0}, {0, 1, 2}, {0, 1, 2, 3, 4, 5}, {3}, {0, 2}, {1, 5}, {5}} {
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
