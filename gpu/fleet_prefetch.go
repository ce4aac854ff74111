package gpu

import (
	"context"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
)

// Loads ahead of their jobs: the models a run will need once jobs not
// submitted yet arrive (the judge phase's), and the loads the policy asks
// for with no job (placement.Assignment.Load).

// Expect tells the fleet how many jobs of each model the caller will submit
// later (the judging of a run, whose jobs exist only once the cells they
// judge have ended), so that placement may load those models ahead of
// their jobs, as inference ends (placement.FleetView.Upcoming). Each judge
// job submitted then counts one off its model. Expect(nil) forgets them.
func (f *Fleet) Expect(jobs map[string]int) {
	f.mu.Lock()
	f.upcoming = map[string]int{}
	for m, n := range jobs {
		if n > 0 {
			f.learnLocked(m)
			f.upcoming[m] = n
		}
	}
	f.mu.Unlock()
	f.signal()
}

// expectedLocked counts a judge job submitted off what Expect announced.
func (f *Fleet) expectedLocked(j *Job) {
	m := j.Request.Model
	if j.Purpose != chat.PurposeJudge || f.upcoming[m] <= 0 {
		return
	}
	if f.upcoming[m]--; f.upcoming[m] == 0 {
		delete(f.upcoming, m)
	}
}

// prefetchLocked starts the load the policy asked for with a (a load with
// no job): it takes a free slot of the server for the warm-up request, as
// a job that loads its model does, and jobs of the model placed there
// meanwhile wait for it. It reports whether it started.
func (f *Fleet) prefetchLocked(a placement.Assignment, now time.Time) bool {
	s, m := f.byName[a.Server], a.Load
	if s == nil || !s.takesWork(now) || !s.jit || !s.offered[m] || s.isResident(m) || len(s.loads) > 0 {
		return false
	}
	slot := s.acquire(m)
	ctx, cancel := context.WithCancelCause(f.ctx)
	s.slots[slot].cancel = cancel
	s.beginLoad(m, f.models)
	done := make(chan struct{})
	s.loads[m] = done
	f.wg.Add(1)
	// The name to send is read here, under the fleet's lock: learn may
	// change the server's table while the warm-up goes out.
	go f.prefetch(ctx, cancel, s, slot, m, s.sendAs(m), done)
	f.log.Debug("fleet: load ahead of its jobs", "model", m, "server", s.cfg.Name, "slot", slot)
	return true
}

// prefetch sends the warm-up request of a load with no job and gives its
// slot back when the model is loaded (or the load failed).
func (f *Fleet) prefetch(ctx context.Context, cancel context.CancelCauseFunc, s *fleetServer, slot int, model, as string, done chan struct{}) {
	defer f.wg.Done()
	defer cancel(nil)
	var report func(chat.Result, error)
	if f.opts.Warmup != nil {
		report = f.opts.Warmup(s.cfg.Name, model)
	}
	res, err := s.client.Chat(ctx, warmupRequest(as))
	err = asFleetName(err, as, model)
	if err != nil && ctx.Err() != nil {
		err = f.endedErr(ctx, s, model, "while loading the model")
	}

	f.mu.Lock()
	delete(s.loads, model)
	close(done)
	if err == nil && s.up {
		s.loaded(model, f.models)
	}
	s.release(slot, err == nil)
	h := s.observeHealth(err)
	f.notifyLocked()
	f.mu.Unlock()
	f.healthChanged(s.cfg.Name, h)
	f.signal()
	if err != nil {
		f.log.Info("fleet: load ahead of its jobs failed", "server", s.cfg.Name, "model", model, "err", err)
	}
	if report != nil {
		report(res, err)
	}
}
