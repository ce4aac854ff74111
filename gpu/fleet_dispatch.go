package gpu

import (
	"context"
	"errors"
	"time"
)

var errJobTimeout = errors.New("job timeout (counted from dispatch)")

// placement is one the dispatcher made: a job, its server and slot,
// and what stands between it and sending.
type placement struct {
	q    *fleetJob
	s    *fleetServer
	slot int
	load chan struct{} // this job warms the model up, then closes load
	wait chan struct{} // another job is warming the model up: wait for it
}

// loop is the dispatcher: one goroutine, woken whenever a job arrives, a
// slot frees or the fleet's picture changes.
func (f *Fleet) loop() {
	defer f.wg.Done()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		}
		f.dispatch()
	}
}

// dispatch asks the policy for placements and starts the valid ones.
func (f *Fleet) dispatch() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.compactLocked()
	if len(f.queue) == 0 || !f.anyFreeLocked() {
		// Nothing can start: spare the policy a pass over the whole queue.
		f.mu.Unlock()
		return
	}
	view := f.viewLocked()
	var starts []*placement
	for _, a := range f.policy.Place(view) {
		q, s := f.byID[a.Job], f.byName[a.Server]
		if !placeable(q, s) {
			// A policy is a pure function of a view that is still true
			// here, so this is a policy bug; skip it rather than oversubscribe.
			f.log.Warn("fleet: policy made an invalid placement", "job", a.Job, "server", a.Server)
			continue
		}
		f.leaveQueueLocked(q, true)
		model := q.job.Request.Model
		st := &placement{q: q, s: s, slot: s.acquire(model)}
		if s.jit && !s.isResident(model) {
			if ch, ok := s.loads[model]; ok {
				st.wait = ch
			} else {
				st.load = make(chan struct{})
				s.loads[model] = st.load
			}
		}
		f.running[q.job.Purpose]++
		f.log.Debug("fleet: dispatch", "job", q.id, "model", model, "server", s.cfg.Name,
			"slot", st.slot, "warmup", st.load != nil)
		starts = append(starts, st)
	}
	f.wg.Add(len(starts))
	f.compactLocked()
	f.mu.Unlock()
	for _, st := range starts {
		go f.run(st)
	}
}

func (f *Fleet) anyFreeLocked() bool {
	for _, s := range f.servers {
		if s.up && s.offered != nil && s.free() > 0 {
			return true
		}
	}
	return false
}

// placeable checks an assignment against the fleet as it is.
func placeable(q *fleetJob, s *fleetServer) bool {
	return q != nil && !q.gone && s != nil && s.up && s.free() > 0 &&
		s.offered[q.job.Request.Model] && (q.job.Pin == "" || q.job.Pin == s.cfg.Name)
}

func (f *Fleet) viewLocked() FleetView {
	v := FleetView{
		Now: f.now(), Queue: f.views, Models: f.opts.Models, JudgeModels: f.opts.JudgeModels,
		Servers:    make([]ServerView, len(f.servers)),
		Phase1Done: f.queuedIn == 0 && f.running[PurposeInference] == 0,
	}
	for i, s := range f.servers {
		v.Servers[i] = s.view()
	}
	return v
}

// run is the goroutine of one running job: warm-up if its model must be
// loaded, the request, then the slot back and Done.
func (f *Fleet) run(st *placement) {
	defer f.wg.Done()
	q, s, j := st.q, st.s, st.q.job

	// The job's own context, ended also when the fleet closes.
	ctx, cancel := context.WithCancelCause(q.ctx)
	defer cancel(nil)
	fired := make(chan struct{})
	stop := context.AfterFunc(f.ctx, func() {
		cancel(errFleetClosed)
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired // no goroutine of ours outlives the job
		}
	}()

	if j.Dispatched != nil {
		j.Dispatched(s.cfg.Name)
	}
	switch {
	case st.load != nil:
		f.warmup(ctx, st, j.Timeout)
	case st.wait != nil:
		select {
		case <-st.wait:
		case <-ctx.Done():
		}
	}

	res, err := Result{Server: s.cfg.Name}, error(nil)
	if ctx.Err() != nil {
		err = canceledErr(ctx, j.Request.Model, s.cfg.Name, "before it was sent")
	} else {
		rctx, rcancel := ctx, context.CancelFunc(func() {})
		if j.Timeout > 0 {
			rctx, rcancel = context.WithTimeoutCause(ctx, j.Timeout, errJobTimeout)
		}
		res, err = s.client.Chat(rctx, j.Request)
		rcancel()
		if err != nil && ctx.Err() != nil {
			// The caller stopped or the fleet closed: whatever the
			// transport made of that, the job was cancelled.
			err = canceledErr(ctx, j.Request.Model, s.cfg.Name, "in flight")
		}
	}
	f.settle(st, res, err)
	f.finish(q, res, err)
}

// warmup loads the job's model on its server with a one-token request, so
// that load time is not counted in the job's latency, and wakes any job
// that waits on the same load.
func (f *Fleet) warmup(ctx context.Context, st *placement, timeout time.Duration) {
	s, model := st.s, st.q.job.Request.Model
	var report func(Result, error)
	if f.opts.Warmup != nil {
		report = f.opts.Warmup(s.cfg.Name, model)
	}
	wctx, wcancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		wctx, wcancel = context.WithTimeoutCause(ctx, timeout, errJobTimeout)
	}
	res, err := s.client.Chat(wctx, warmupRequest(model))
	wcancel()
	if err != nil && ctx.Err() != nil {
		err = canceledErr(ctx, model, s.cfg.Name, "while loading the model")
	}

	f.mu.Lock()
	delete(s.loads, model)
	close(st.load)
	if err == nil {
		s.slots[st.slot].served = model
	}
	h := s.observeHealth(err)
	f.mu.Unlock()
	f.logHealth(s.cfg.Name, h)
	f.signal() // the model is resident now: the policy may want it
	if err != nil {
		// The job goes on: its own request loads the model or says why not.
		f.log.Info("fleet: warm-up failed", "server", s.cfg.Name, "model", model, "err", err)
	}
	if report != nil {
		report(res, err)
	}
}

func warmupRequest(model string) Request {
	return Request{Model: model, Messages: []Message{{Role: "user", Content: "Hi"}}, MaxTokens: 1}
}

// settle gives the job's slot back and learns from its outcome.
func (f *Fleet) settle(st *placement, res Result, err error) {
	s := st.s
	f.mu.Lock()
	s.release(st.slot, err == nil)
	h := s.observeHealth(err)
	if err == nil {
		s.noteTPS(res.TokensPerSec)
	}
	f.running[st.q.job.Purpose]--
	f.mu.Unlock()
	f.logHealth(s.cfg.Name, h)
	f.signal()
}

// logHealth reports a server going down or coming back.
func (f *Fleet) logHealth(name string, h healthChange) {
	switch {
	case !h.changed:
	case h.up:
		f.log.Info("fleet: server is back", "server", name)
	default:
		f.log.Warn("fleet: server marked down", "server", name, "reason", h.reason)
	}
}
