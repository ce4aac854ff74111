package gpu

import (
	"slices"

	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
)

// The fleet's queue: jobs join it in order, are counted by placement key,
// leave it as they are placed or dropped, and it is compacted as it drains.

func (f *Fleet) enqueueLocked(q *fleetJob) {
	f.queue = append(f.queue, q)
	f.views = append(f.views, q.view())
	v := &f.views[len(f.views)-1]
	q.key, q.weight = placement.KeyOf(v), placement.Weight(v)
	c, ok := f.counts[q.key]
	if !ok {
		c.First = len(f.views) - 1
	}
	c.Jobs++
	c.Weight += q.weight
	f.counts[q.key] = c
	f.byID[q.id] = q
	if q.job.Loop != "" {
		f.releaseLoopLocked(q.job.Loop)
	}
	if q.job.Purpose == chat.PurposeInference {
		f.queuedIn++
	}
	f.expectedLocked(q.job)
}

// uncount takes q, gone from the queue, out of f.counts, under the key and
// weight it was counted with: a key's first job, when it is q, becomes the
// next one of the key still queued.
func (f *Fleet) uncount(q *fleetJob) {
	k := q.key
	c, ok := f.counts[k]
	if !ok {
		return
	}
	if c.Jobs--; c.Jobs <= 0 {
		delete(f.counts, k)
		return
	}
	c.Weight -= q.weight
	if c.First < len(f.queue) && f.queue[c.First] == q {
		i := c.First + 1
		for i < len(f.queue) && (f.queue[i].gone || f.queue[i].key != k) {
			i++
		}
		c.First = i
	}
	f.counts[k] = c
}

// view is what the placement policy sees of q.
func (q *fleetJob) view() placement.JobView {
	return placement.JobView{ID: q.id, Model: q.job.Request.Model, Purpose: q.job.Purpose,
		Pinned: q.job.Pin, Enqueued: q.enqueued, Weight: q.job.Steps}
}

// leaveQueueLocked takes q out of the queue (lazily: compactLocked drops it
// from the slices) and stops watching its context unless stopWatch is false
// (the watch itself is the caller).
func (f *Fleet) leaveQueueLocked(q *fleetJob, stopWatch bool) {
	q.gone = true
	f.dirty = true
	f.goneN++
	f.uncount(q)
	delete(f.byID, q.id)
	if q.job.Purpose == chat.PurposeInference {
		f.queuedIn--
	}
	if stopWatch && q.stop() {
		f.watchers.Done() // it will never run
	}
}

func (f *Fleet) compactLocked() {
	if !f.dirty {
		return
	}
	f.dirty = false
	// Jobs mostly leave in the order they came: when every gone entry is
	// at the front, drop the front, not move the rest (the queue of a
	// large run holds thousands of jobs, and this runs at each dispatch).
	k := 0
	for k < len(f.queue) && f.queue[k].gone {
		k++
	}
	if k == f.goneN {
		clear(f.queue[:k])
		clear(f.views[:k])
		f.queue, f.views, f.goneN = f.queue[k:], f.views[k:], 0
		for key, c := range f.counts {
			c.First -= k
			f.counts[key] = c
		}
		return
	}
	// Gone entries scattered through the queue (placement takes each
	// model's first jobs) leave runs of live ones between them: each run
	// is moved with one copy, not entry by entry. Each key's first job is
	// live (uncount), so it moves with its run.
	n := slices.IndexFunc(f.queue, func(q *fleetJob) bool { return q.gone }) // the live ones before stay
	if n < 0 {
		n = len(f.queue) // goneN miscounted: nothing to drop
	}
	firsts := f.firsts[:0]
	for key, c := range f.counts {
		if c.First >= n {
			firsts = append(firsts, keyFirst{c.First, key})
		}
	}
	slices.SortFunc(firsts, func(a, b keyFirst) int { return a.at - b.at })
	f.firsts = firsts[:0]
	for i := n; i < len(f.queue); {
		if f.queue[i].gone {
			i++
			continue
		}
		j := i + 1
		for j < len(f.queue) && !f.queue[j].gone {
			j++
		}
		for len(firsts) > 0 && firsts[0].at < j {
			c := f.counts[firsts[0].key]
			c.First = n + firsts[0].at - i
			f.counts[firsts[0].key] = c
			firsts = firsts[1:]
		}
		copy(f.queue[n:], f.queue[i:j])
		copy(f.views[n:], f.views[i:j])
		n += j - i
		i = j
	}
	clear(f.queue[n:])
	clear(f.views[n:])
	f.queue, f.views, f.goneN = f.queue[:n], f.views[:n], 0
}

// keyFirst is where a key's first queued job is (compactLocked).
type keyFirst struct {
	at  int
	key placement.QueueKey
}

// dropQueued runs when a queued job's context ends.
func (f *Fleet) dropQueued(q *fleetJob) {
	f.mu.Lock()
	if q.gone {
		// Dispatched or closed meanwhile: whoever took it finishes it.
		f.mu.Unlock()
		return
	}
	f.leaveQueueLocked(q, false)
	f.notifyLocked()
	f.mu.Unlock()
	f.finish(q, chat.Result{}, canceledErr(q.ctx, q.job.Request.Model, "", "while queued"))
	f.signal() // a policy waiting on this job may place others now
}
