package gpu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
)

var errJobTimeout = errors.New("job timeout (counted from dispatch)")

// start is a placement the dispatcher made: a job, its server and slot,
// and what stands between it and sending.
type start struct {
	q    *fleetJob
	s    *fleetServer
	slot int
	as   string // the job's model as the server lists it: the name sent
	// ctx is the job's own context; cancel ends it with a cause: the
	// fleet closing, or its server going down.
	ctx    context.Context
	cancel context.CancelCauseFunc
	load   chan struct{} // this job warms the model up, then closes load
	wait   chan struct{} // another job is warming the model up: wait for it
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
	now := f.now()
	if len(f.queue) == 0 && len(f.upcoming) == 0 || !f.anyFreeLocked(now) {
		// Nothing can start: spare the policy a pass over the whole queue.
		f.mu.Unlock()
		return
	}
	view := f.viewLocked(now)
	var starts []*start
	var loads []placement.Assignment
	for _, a := range f.policy.Place(view) {
		if a.Load != "" {
			loads = append(loads, a) // after the jobs, as the simulation does
			continue
		}
		q, s := f.byID[a.Job], f.byName[a.Server]
		if !placeable(q, s, now) {
			// A policy is a pure function of a view that is still true
			// here, so this is a policy bug; skip it rather than oversubscribe.
			f.log.Warn("fleet: policy made an invalid placement", "job", a.Job, "server", a.Server)
			continue
		}
		f.leaveQueueLocked(q, true)
		starts = append(starts, f.startLocked(q, s))
	}
	loaded := false
	for _, a := range loads {
		if !f.prefetchLocked(a, now) {
			f.log.Warn("fleet: policy asked for an invalid load", "model", a.Load, "server", a.Server)
			continue
		}
		loaded = true
	}
	f.wg.Add(len(starts))
	f.compactLocked()
	if len(starts) > 0 || loaded {
		f.notifyLocked()
	}
	f.mu.Unlock()
	for _, st := range starts {
		f.spawn(st)
	}
}

// workerIdle is how long a worker waits for its next job before it ends
// (Fleet.workerIdle, which tests may lengthen).
const workerIdle = 2 * time.Second

// spawn runs st on a worker that waits for a job, or on a new one: a
// worker's stack is already grown for the HTTP client, where a fresh
// goroutine's grows by copies (docs/performance.md). A job placed while the
// worker of the one before is still finishing it starts another worker;
// each ends after f.workerIdle without a job, or when the fleet closes.
func (f *Fleet) spawn(st *start) {
	select {
	case f.idle <- st:
	default:
		f.wg.Add(1)
		go f.worker(st)
	}
}

func (f *Fleet) worker(st *start) {
	defer f.wg.Done()
	timer := time.NewTimer(f.workerIdle)
	defer timer.Stop()
	for {
		f.run(st)
		timer.Reset(f.workerIdle)
		select {
		case st = <-f.idle:
		case <-timer.C:
			return
		case <-f.ctx.Done():
			return
		}
	}
}

// startLocked gives q a slot on s and decides whether it must load its
// model first or wait for a load under way.
func (f *Fleet) startLocked(q *fleetJob, s *fleetServer) *start {
	model := q.job.Request.Model
	st := &start{q: q, s: s, slot: s.acquire(model), as: s.sendAs(model)}
	if s.budget.started(f.now()); s.budget.wait(f.now()) > 0 {
		f.wakeMonitor() // to wake the dispatcher when the budget allows more
	}
	st.ctx, st.cancel = context.WithCancelCause(q.ctx)
	s.slots[st.slot].cancel = st.cancel
	switch {
	case !s.jit || s.isResident(model):
		s.res.touch(model)
	case s.loads[model] != nil:
		st.wait = s.loads[model]
	default:
		s.beginLoad(model, f.models)
		st.load = make(chan struct{})
		s.loads[model] = st.load
	}
	f.running[q.job.Purpose]++
	f.log.Debug("fleet: dispatch", "job", q.id, "model", model, "server", s.cfg.Name,
		"slot", st.slot, "warmup", st.load != nil)
	return st
}

func (f *Fleet) anyFreeLocked(now time.Time) bool {
	for _, s := range f.servers {
		if s.takesWork(now) {
			return true
		}
	}
	return false
}

// placeable checks an assignment against the fleet as it is.
func placeable(q *fleetJob, s *fleetServer, now time.Time) bool {
	return q != nil && !q.gone && s != nil && s.takesWork(now) &&
		s.offered[q.job.Request.Model] && (q.job.Pin == "" || q.job.Pin == s.cfg.Name)
}

func (f *Fleet) viewLocked(now time.Time) placement.FleetView {
	v := placement.FleetView{
		Now: now, Queue: f.views, Counts: f.counts, Models: f.models, JudgeModels: f.opts.JudgeModels, Upcoming: f.upcoming,
		Servers:    make([]placement.ServerView, len(f.servers)),
		Phase1Done: f.queuedIn == 0 && f.running[chat.PurposeInference] == 0,
	}
	for i, s := range f.servers {
		v.Servers[i] = s.view(now, f.models)
	}
	return v
}

// run is the goroutine of one running job: warm-up if its model must be
// loaded, the request, then the slot back and Done.
func (f *Fleet) run(st *start) {
	defer f.wg.Done()
	q, s, j := st.q, st.s, st.q.job
	ctx := st.ctx // Close cancels it through its slot, as markDown does
	defer st.cancel(nil)

	if j.Dispatched != nil && (st.load != nil || st.wait != nil) {
		j.Dispatched(s.cfg.Name, true)
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
	if j.Dispatched != nil {
		j.Dispatched(s.cfg.Name, false)
	}

	res, err := chat.Result{Server: s.cfg.Name}, error(nil)
	if ctx.Err() != nil {
		err = f.endedErr(ctx, s, j.Request.Model, "before it was sent")
	} else {
		rctx, rcancel := ctx, context.CancelFunc(func() {})
		if j.Timeout > 0 {
			rctx, rcancel = context.WithTimeoutCause(ctx, j.Timeout, errJobTimeout)
		}
		req := j.Request
		req.Model = st.as
		res, err = f.send(rctx, st, req)
		rcancel()
		err = asFleetName(err, st.as, j.Request.Model)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			// The caller stopped, the fleet closed or the server went
			// down: whatever the transport made of that, it decides.
			err = f.endedErr(ctx, s, j.Request.Model, "in flight")
		case chat.ClassOf(err) == chat.ClassRateLimit:
			err = f.rateLimitBeyond(j, err)
		case suspect(chat.ClassOf(err)):
			// A crash cuts streams (malformed) or refuses connections;
			// only a look at the server tells a crash from a bad reply.
			if down, why := f.confirmDown(s); down {
				err = serverDownErr(s, j.Request.Model, why, err)
			}
		}
	}
	f.settle(st, res, err)
	f.finish(q, res, err)
}

// send is the one place a job's requests (its warm-up, then itself) leave
// for its server: its BeforeSend is asked first, so that a process that may
// no longer send for the job (its run was taken over while it was paused)
// sends nothing, not even what was queued before it knew.
func (f *Fleet) send(ctx context.Context, st *start, req chat.Request) (chat.Result, error) {
	s, j := st.s, st.q.job
	if j.BeforeSend != nil {
		if err := j.BeforeSend(ctx); err != nil {
			return chat.Result{Server: s.cfg.Name}, &chat.Error{Class: chat.ClassCanceled, Server: s.cfg.Name,
				Model: req.Model, Message: fmt.Sprintf("not sent: %v", err), Err: err}
		}
	}
	return s.client.Chat(ctx, req)
}

// endedErr is the error of a job whose context ended: unavailable when its
// server went down (the runner runs it elsewhere), else cancelled.
func (f *Fleet) endedErr(ctx context.Context, s *fleetServer, model, when string) *chat.Error {
	if !errors.Is(context.Cause(ctx), errServerDown) {
		return canceledErr(ctx, model, s.cfg.Name, when)
	}
	f.mu.Lock()
	why := s.downReason
	f.mu.Unlock()
	return serverDownErr(s, model, why, errServerDown)
}

func serverDownErr(s *fleetServer, model, why string, err error) *chat.Error {
	return &chat.Error{Class: chat.ClassUnavailable, Server: s.cfg.Name, Model: model,
		Message: "the server went down under the job: " + why, Err: err}
}

// warmup loads the job's model on its server with a one-token request, so
// that load time is not counted in the job's latency, and wakes any job
// that waits on the same load.
func (f *Fleet) warmup(ctx context.Context, st *start, timeout time.Duration) {
	s, model := st.s, st.q.job.Request.Model
	var report func(chat.Result, error)
	if f.opts.Warmup != nil {
		report = f.opts.Warmup(s.cfg.Name, model)
	}
	wctx, wcancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		wctx, wcancel = context.WithTimeoutCause(ctx, timeout, errJobTimeout)
	}
	res, err := f.send(wctx, st, warmupRequest(st.as))
	wcancel()
	err = asFleetName(err, st.as, model)
	if err != nil && ctx.Err() != nil {
		err = f.endedErr(ctx, s, model, "while loading the model")
	}

	f.mu.Lock()
	delete(s.loads, model)
	close(st.load)
	if err == nil && s.up {
		s.loaded(model, f.models)
	}
	h := s.observeHealth(err)
	f.notifyLocked()
	f.mu.Unlock()
	f.healthChanged(s.cfg.Name, h)
	f.signal() // the model is resident now: the policy may want it
	if err != nil {
		// The job goes on: its own request loads the model or says why not.
		f.log.Info("fleet: warm-up failed", "server", s.cfg.Name, "model", model, "err", err)
	}
	if report != nil {
		report(res, err)
	}
}

// asFleetName gives a request's error the fleet's name of its model: the
// client names the model it sent, the server's spelling.
func asFleetName(err error, sent, model string) error {
	var e *chat.Error
	if sent != model && errors.As(err, &e) && e.Model == sent {
		e.Model = model
	}
	return err
}

func warmupRequest(model string) chat.Request {
	return chat.Request{Model: model, Messages: []chat.Message{{Role: "user", Content: "Hi"}}, MaxTokens: 1}
}

// settle gives the job's slot back and learns from its outcome: the
// model's job time, the server's health and decode rate, and a 429's
// Retry-After, before which the server gets nothing new.
func (f *Fleet) settle(st *start, res chat.Result, err error) {
	s, model := st.s, st.q.job.Request.Model
	f.mu.Lock()
	s.release(st.slot, err == nil)
	h := s.observeHealth(err)
	if err == nil && s.up {
		f.holdLoopLocked(s, st.q.job, res)
	}
	if err == nil {
		s.noteTPS(res.TokensPerSec)
		if s.up {
			s.served(model, f.models)
		}
		if p := st.q.job.Purpose; p == chat.PurposeInference || p == chat.PurposeJudge {
			f.noteJobTimeLocked(model, res.Latency)
		}
	}
	var e *chat.Error
	rl := res.RateLimit
	if errors.As(err, &e) && rl == nil {
		rl = e.RateLimit
	}
	s.budget.ended(f.now(), res.PromptTokens+res.CompletionTokens, rl)
	if s.budget.wait(f.now()) > 0 {
		f.wakeMonitor()
	}
	if errors.As(err, &e) && e.Class == chat.ClassRateLimit && e.RetryAfter > 0 {
		if until := f.now().Add(e.RetryAfter); until.After(s.heldUntil) {
			s.heldUntil, s.heldFor = until, e.RetryAfter
			f.wakeMonitor() // to wake the dispatcher when the hold ends
		}
	}
	f.running[st.q.job.Purpose]--
	f.notifyLocked()
	f.mu.Unlock()
	f.healthChanged(s.cfg.Name, h)
	f.signal()
}
