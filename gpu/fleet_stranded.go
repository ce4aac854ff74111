package gpu

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pitwall/gpu/chat"
)

// strandedRecheck is how often the monitor looks at queued jobs that no up
// server can run, while there are any and Options.MaxWait is set.
const strandedRecheck = 250 * time.Millisecond

// couldRun reports whether s, were it up, may run q: it offers q's model
// (or its models are not known yet) and q is not pinned elsewhere.
func (s *fleetServer) couldRun(q *fleetJob) bool {
	return (s.offered == nil || s.offered[q.job.Request.Model]) && (q.job.Pin == "" || q.job.Pin == s.cfg.Name)
}

// strandedLocked reports whether no up server can run q.
func (f *Fleet) strandedLocked(q *fleetJob) bool {
	for _, s := range f.servers {
		if s.up && s.couldRun(q) {
			return false
		}
	}
	return true
}

// giveUpStranded ends, as unavailable, the queued jobs that no up server
// could run for Options.MaxWait, and, as rate-limited, those that only
// servers held past what the job may wait could run (heldOutLocked); it
// returns when to look again.
func (f *Fleet) giveUpStranded() time.Duration {
	now, clock := time.Now(), f.now()
	var dropped []droppedJob
	next := time.Hour
	f.mu.Lock()
	anyHeld := false
	for _, s := range f.servers {
		if !s.up && f.opts.MaxWait > 0 || s.held(clock) {
			// Jobs queued from now on may be stranded or held out: look
			// again soon.
			next = strandedRecheck
		}
		anyHeld = anyHeld || s.up && s.held(clock)
	}
	if f.opts.MaxWait <= 0 && !anyHeld {
		f.mu.Unlock()
		return next
	}
	for _, q := range f.queue {
		if q.gone {
			continue
		}
		if anyHeld {
			if err := f.heldOutLocked(q, clock); err != nil {
				f.leaveQueueLocked(q, true)
				dropped = append(dropped, droppedJob{q: q, err: err})
				continue
			}
		}
		if f.opts.MaxWait <= 0 {
			continue
		}
		if !f.strandedLocked(q) {
			q.stranded = time.Time{}
			continue
		}
		if q.stranded.IsZero() {
			q.stranded = now
		}
		if left := f.opts.MaxWait - now.Sub(q.stranded); left > 0 {
			next = min(next, left, strandedRecheck)
			continue
		}
		f.leaveQueueLocked(q, true)
		dropped = append(dropped, droppedJob{q: q, err: f.gaveUpErrLocked(q)})
	}
	if len(dropped) > 0 {
		f.notifyLocked()
	}
	f.mu.Unlock()
	for _, d := range dropped {
		f.finish(d.q, chat.Result{}, d.err)
	}
	return next
}

// gaveUpErrLocked says why a stranded job was given up on: the servers
// that could run it, down since when and why.
func (f *Fleet) gaveUpErrLocked(q *fleetJob) *chat.Error {
	var why []string
	for _, s := range f.servers {
		if s.couldRun(q) {
			why = append(why, fmt.Sprintf("%s down since %s (%s)", s.cfg.Name, s.downSince.Format("15:04:05"), s.downReason))
		}
	}
	slices.Sort(why)
	msg := fmt.Sprintf("gave up after max_wait %s: no server that offers model %q came back", f.opts.MaxWait, q.job.Request.Model)
	if len(why) > 0 {
		msg += ": " + strings.Join(why, "; ")
	}
	return &chat.Error{Class: chat.ClassUnavailable, Server: q.job.Pin, Model: q.job.Request.Model, Message: msg, Err: ErrGaveUp}
}
