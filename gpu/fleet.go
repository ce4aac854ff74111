package gpu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Fleet. Every field may be left zero.
type Options struct {
	Policy     Policy       // default FirstFit
	HTTPClient *http.Client // default: one of the fleet's own, shared by its servers
	Logger     *slog.Logger // default discards
	Now        func() time.Time
	Models     map[string]ModelView // sizes/load times when known (sim)
	// JudgeModels are the models the judge phase needs (see FleetView).
	JudgeModels map[string]bool
	// Warmup, if set, is called when the fleet is about to load a model on a
	// server that does not have it resident (JIT backends) by sending a
	// warm-up request (max_tokens 1); the fleet calls the returned func with
	// the warm-up's outcome. The runner records it in the ledger. The fleet
	// warms up whether or not Warmup is set; the hook only reports it.
	Warmup func(server, model string) func(Result, error)
}

// Job is one request for the fleet to run on some server.
type Job struct {
	Request Request
	Purpose Purpose
	Pin     string // run only on this server ("" = any that offers the model)
	// Timeout counts from dispatch (a slot acquired and the model loaded),
	// never from enqueue: a job queued behind slow work must not expire
	// before it is sent. 0 means no timeout of the fleet's own.
	Timeout time.Duration
	// Dispatched is called once when the job takes a slot, before sending.
	Dispatched func(server string)
	// Done is called exactly once: with the result, or with an *Error
	// (ClassCanceled when the Submit context is cancelled while queued or in
	// flight, or the fleet closes). It may be called before Submit returns
	// when the job cannot run at all, and it may call Submit.
	Done func(Result, error)
}

// Fleet runs jobs on a set of servers: each server takes at most its slots at
// once, the rest wait in one queue, and a Policy decides which queued job
// goes where each time a job arrives or a slot frees. Queued jobs are data;
// a goroutine exists per running request only.
type Fleet struct {
	opts    Options
	policy  Policy
	log     *slog.Logger
	now     func() time.Time
	servers []*fleetServer
	byName  map[string]*fleetServer
	ownHTTP *http.Client // made here: its idle connections close with the fleet

	ctx    context.Context // ends on Close, which cancels in-flight work
	cancel context.CancelFunc
	wake   chan struct{}  // signals the dispatcher; holds at most one signal
	wg     sync.WaitGroup // the dispatcher and every running job
	// watchers counts registered watches of queued jobs' contexts (a
	// context.AfterFunc each) until each is stopped or has run.
	watchers sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	nextID   uint64
	queue    []*fleetJob // in submission order; may hold gone entries until compacted
	views    []JobView   // views[i] describes queue[i] once compacted
	byID     map[uint64]*fleetJob
	dirty    bool            // queue holds gone entries
	queuedIn int             // inference jobs in the queue
	running  map[Purpose]int // jobs in flight, by purpose
}

// fleetJob is a job the fleet has accepted.
type fleetJob struct {
	id       uint64
	job      *Job
	ctx      context.Context
	enqueued time.Time
	stop     func() bool // stops watching ctx; false when the watch has fired
	gone     bool        // left the queue (guarded by Fleet.mu)
	done     atomic.Bool
}

var errFleetClosed = errors.New("fleet closed")

// NewFleet returns a fleet of servers and starts its dispatcher; Close stops it.
func NewFleet(servers []ServerConfig, opts Options) *Fleet {
	if opts.Policy == nil {
		opts.Policy = FirstFit
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	f := &Fleet{
		opts: opts, policy: opts.Policy, log: opts.Logger, now: opts.Now,
		byName: make(map[string]*fleetServer, len(servers)),
		wake:   make(chan struct{}, 1),
		byID:   map[uint64]*fleetJob{}, running: map[Purpose]int{},
	}
	hc := opts.HTTPClient
	if hc == nil {
		slots := 0
		for _, sc := range servers {
			slots += max(sc.Slots, 1)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = max(32, 2*slots)
		hc = &http.Client{Transport: t}
		f.ownHTTP = hc
	}
	for _, sc := range servers {
		s := newServer(sc, NewClient(sc, hc))
		f.servers = append(f.servers, s)
		f.byName[sc.Name] = s
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.wg.Add(1)
	go f.loop()
	return f
}

// Submit queues a job; it never blocks. j.Done is called exactly once.
func (f *Fleet) Submit(ctx context.Context, j *Job) {
	if ctx == nil {
		ctx = context.Background()
	}
	q := &fleetJob{job: j, ctx: ctx, enqueued: f.now()}
	model := j.Request.Model

	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		f.finish(q, Result{}, &Error{Class: ClassCanceled, Model: model, Message: "fleet closed", Err: errFleetClosed})
		return
	}
	if ctx.Err() != nil {
		f.mu.Unlock()
		f.finish(q, Result{}, canceledErr(ctx, model, "", "before it was queued"))
		return
	}
	if why := f.unservableLocked(model, j.Pin); why != "" {
		f.mu.Unlock()
		f.finish(q, Result{}, &Error{Class: ClassHTTP4xx, Server: j.Pin, Model: model, Message: why})
		return
	}
	f.nextID++
	q.id = f.nextID
	f.enqueueLocked(q)
	f.watchers.Add(1)
	q.stop = context.AfterFunc(ctx, func() {
		defer f.watchers.Done()
		f.dropQueued(q)
	})
	f.mu.Unlock()
	f.signal()
}

func (f *Fleet) enqueueLocked(q *fleetJob) {
	f.queue = append(f.queue, q)
	f.views = append(f.views, JobView{ID: q.id, Model: q.job.Request.Model, Purpose: q.job.Purpose,
		Pinned: q.job.Pin, Enqueued: q.enqueued})
	f.byID[q.id] = q
	if q.job.Purpose == PurposeInference {
		f.queuedIn++
	}
}

// leaveQueueLocked takes q out of the queue (lazily: compactLocked drops it
// from the slices) and stops watching its context unless stopWatch is false
// (the watch itself is the caller).
func (f *Fleet) leaveQueueLocked(q *fleetJob, stopWatch bool) {
	q.gone = true
	f.dirty = true
	delete(f.byID, q.id)
	if q.job.Purpose == PurposeInference {
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
	n := 0
	for i, q := range f.queue {
		if !q.gone {
			f.queue[n], f.views[n] = q, f.views[i]
			n++
		}
	}
	clear(f.queue[n:])
	f.queue, f.views = f.queue[:n], f.views[:n]
	f.dirty = false
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
	f.mu.Unlock()
	f.finish(q, Result{}, canceledErr(q.ctx, q.job.Request.Model, "", "while queued"))
	f.signal() // a policy waiting on this job may place others now
}

// unservableLocked says why a job for model (pinned to pin) can never run,
// or "" when it can or may yet. A server whose models are not known yet
// may offer anything.
func (f *Fleet) unservableLocked(model, pin string) string {
	if model == "" {
		return "the request names no model"
	}
	if pin != "" {
		s := f.byName[pin]
		switch {
		case s == nil:
			return fmt.Sprintf("no server is named %q", pin)
		case s.offered != nil && !s.offered[model]:
			return fmt.Sprintf("server %s does not offer model %q", pin, model)
		}
		return ""
	}
	for _, s := range f.servers {
		if s.offered == nil || s.offered[model] {
			return ""
		}
	}
	return fmt.Sprintf("no configured server offers model %q", model)
}

// finish calls the job's Done, once.
func (f *Fleet) finish(q *fleetJob, res Result, err error) {
	if !q.done.CompareAndSwap(false, true) {
		return
	}
	if q.job.Done != nil {
		q.job.Done(res, err)
	}
}

func canceledErr(ctx context.Context, model, server, when string) *Error {
	cause := context.Cause(ctx)
	return &Error{Class: ClassCanceled, Server: server, Model: model,
		Message: fmt.Sprintf("cancelled %s (%v)", when, cause), Err: cause}
}

// Offered returns each server's models, for servers whose models are known.
func (f *Fleet) Offered() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string][]string, len(f.servers))
	for _, s := range f.servers {
		if s.offered != nil {
			out[s.cfg.Name] = slices.Sorted(maps.Keys(s.offered))
		}
	}
	return out
}

// State returns each server's state, in configuration order, for the fleet
// panel. GPUs is left for telemetry to fill.
func (f *Fleet) State() []ServerState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ServerState, len(f.servers))
	for i, s := range f.servers {
		out[i] = s.state()
		for _, q := range f.queue {
			if !q.gone && s.offered[q.job.Request.Model] && (q.job.Pin == "" || q.job.Pin == s.cfg.Name) {
				out[i].Queue++
			}
		}
	}
	return out
}

// Close cancels queued jobs (Done with ClassCanceled) and in-flight ones,
// and returns when every goroutine of the fleet has ended, so it must not be
// called from a job's Done or Dispatched. Calling it again does nothing.
func (f *Fleet) Close() {
	f.mu.Lock()
	var dropped []*fleetJob
	if !f.closed {
		f.closed = true
		for _, q := range f.queue {
			if !q.gone {
				f.leaveQueueLocked(q, true)
				dropped = append(dropped, q)
			}
		}
		f.queue, f.views = nil, nil
	}
	f.mu.Unlock()
	f.cancel()
	for _, q := range dropped {
		f.finish(q, Result{}, &Error{Class: ClassCanceled, Model: q.job.Request.Model,
			Message: "cancelled while queued (fleet closed)", Err: errFleetClosed})
	}
	f.wg.Wait()
	f.watchers.Wait()
	if f.ownHTTP != nil {
		f.ownHTTP.CloseIdleConnections()
	}
}

// signal wakes the dispatcher; a signal already pending covers this one.
func (f *Fleet) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}
