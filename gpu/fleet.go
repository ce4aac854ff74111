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

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/gpu/telemetry"
)

// Options configure a Fleet. Every field may be left zero.
type Options struct {
	Policy     placement.Policy // default placement.Default (placement.FirstFit is the simple alternative)
	HTTPClient *http.Client     // default: one of the fleet's own, shared by its servers
	Logger     *slog.Logger     // default discards
	// Now is the clock of enqueue times and Retry-After holds (default
	// time.Now); tests inject one to decide when a hold ends.
	Now func() time.Time
	// Models is what is known of each model up front: size and load time
	// (the lead fills them from the simulator's catalogue). The fleet adds
	// each model's measured JobTime as jobs end.
	Models map[string]placement.ModelView
	// JudgeModels are the models the judge phase needs (see placement.FleetView).
	JudgeModels map[string]bool
	// Warmup, if set, is called when the fleet is about to load a model on a
	// server that does not have it resident (JIT backends) by sending a
	// warm-up request (max_tokens 1); the fleet calls the returned func with
	// the warm-up's outcome. The runner records it in the ledger. The fleet
	// warms up whether or not Warmup is set; the hook only reports it.
	Warmup func(server, model string) func(chat.Result, error)
	// MaxWait bounds how long a queued job waits while no server that
	// could run it is up (every server offering its model is down, or the
	// server it is pinned to is): past it, the job ends unavailable with
	// ErrGaveUp, so that a run with a server gone for good ends by itself.
	// 0 waits for ever.
	MaxWait time.Duration
	// Telemetry, when set, gives State the GPUs of each server that is not
	// simulated (ServerConfig.GPUs are indices into it), and the policy
	// their memory where the server itself does not say.
	Telemetry *telemetry.Watcher
	// LoopHold is how long the fleet keeps an agent loop's model on the
	// server that ran its last step, waiting for the next step (Job.Loop);
	// 0 means DefaultLoopHold, negative holds nothing.
	LoopHold time.Duration
	// ProbeInterval is how often each up server is probed for its state
	// (Probe: resident models, VRAM, GPUs); 0 means DefaultProbeInterval,
	// negative turns periodic probing off.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe, and the ping that checks a server
	// after a request on it failed (default DefaultProbeTimeout).
	ProbeTimeout time.Duration
	// ProbeBackoffMin and ProbeBackoffMax bound the wait between probes of
	// a server that is down, which doubles after each failed probe
	// (defaults DefaultProbeBackoffMin and DefaultProbeBackoffMax).
	ProbeBackoffMin, ProbeBackoffMax time.Duration
}

// Job is one request for the fleet to run on some server.
type Job struct {
	Request chat.Request
	Purpose chat.Purpose
	Pin     string // run only on this server ("" = any that offers the model)
	// Timeout counts from dispatch (a slot acquired and the model loaded),
	// never from enqueue: a job queued behind slow work must not expire
	// before it is sent. 0 means no timeout of the fleet's own.
	Timeout time.Duration
	// Dispatched reports the job's progress on the server that took it:
	// once with loading = true when it must first wait for its model to
	// load there, then once with loading = false as it is sent.
	Dispatched func(server string, loading bool)
	// Steps is how many model turns the job stands for: a step of an agent
	// loop is followed by the loop's next steps on the same model, one
	// after another, and placement counts it as that much work
	// (placement.JobView.Weight). 0 means 1.
	Steps int
	// Loop names the agent loop the job is a step of ("" for none). When a
	// step of it ends in tool calls with Steps > 1, the fleet keeps its
	// model on its server for the loop's next step, which the caller
	// submits once it has answered the calls: until a job of the same Loop
	// is queued, or Options.LoopHold has passed.
	Loop string
	// BeforeSend, when set, is asked just before each request sent for the
	// job leaves (the warm-up that loads its model, then the request
	// itself), on the job's goroutine: an error keeps that request from
	// being sent, and the job ends chat.ClassCanceled saying it was not
	// sent, wrapping the error. The runner's asks whether its process still
	// owns the run, so that a superseded owner sends nothing.
	BeforeSend func(ctx context.Context) error
	// Done is called exactly once: with the result, or with a *chat.Error
	// (chat.ClassCanceled when the Submit context is cancelled while queued or in
	// flight, or the fleet closes). It may be called before Submit returns
	// when the job cannot run at all, and it may call Submit.
	Done func(chat.Result, error)
}

// Fleet runs jobs on a set of servers: each server takes at most its slots at
// once, the rest wait in one queue, and a placement.Policy decides which queued job
// goes where each time a job arrives or a slot frees. Queued jobs are data;
// a goroutine exists per running request, beside the dispatcher and the
// monitor that probes the servers.
//
// A server that refuses connections or stops answering is marked down: the
// jobs in flight on it end with chat.ClassUnavailable (the caller runs them
// again, elsewhere), queued jobs go to other servers or wait for it, and it
// is probed with backoff until it answers, when it rejoins with what it
// holds then. A 429 with Retry-After holds the server back until then.
type Fleet struct {
	opts    Options
	policy  placement.Policy
	log     *slog.Logger
	now     func() time.Time
	servers []*fleetServer
	byName  map[string]*fleetServer
	hc      *http.Client // the servers' and the probes' HTTP client
	ownHTTP *http.Client // made here: its idle connections close with the fleet
	probes  probeTimes

	ctx    context.Context // ends on Close, which cancels in-flight work
	cancel context.CancelFunc
	wake   chan struct{} // signals the dispatcher; holds at most one signal
	// monitorWake signals the monitor (probes, Retry-After ends) that its
	// schedule changed; it holds at most one signal.
	monitorWake chan struct{}
	wg          sync.WaitGroup // the dispatcher, the monitor, probes, workers and every running job
	// idle hands a job to a worker waiting for one (fleet_dispatch.go,
	// spawn); unbuffered, so a send succeeds only where one waits.
	idle       chan *start
	workerIdle time.Duration
	// watchers counts registered watches of queued jobs' contexts (a
	// context.AfterFunc each) until each is stopped or has run.
	watchers sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	nextID   uint64
	queue    []*fleetJob                                 // in submission order; may hold gone entries until compacted
	views    []placement.JobView                         // views[i] describes queue[i] once compacted
	counts   map[placement.QueueKey]placement.QueueCount // the live queue's jobs by key (FleetView.Counts)
	firsts   []keyFirst                                  // compactLocked's, kept for the next
	byID     map[uint64]*fleetJob
	dirty    bool                 // queue holds gone entries
	goneN    int                  // how many
	queuedIn int                  // inference jobs in the queue
	running  map[chat.Purpose]int // jobs in flight, by purpose
	models   map[string]placement.ModelView
	jobTimes map[string]meanAcc // per model: what its jobs' times add to
	names    map[string]bool    // the models' names met so far (fleet_names.go)
	upcoming map[string]int     // judge jobs announced and not submitted yet (Expect)
	changed  chan struct{}      // closed and replaced when the state changes (WaitState)
}

// fleetJob is a job the fleet has accepted.
type fleetJob struct {
	id       uint64
	job      *Job
	ctx      context.Context
	enqueued time.Time
	stop     func() bool // stops watching ctx; false when the watch has fired
	gone     bool        // left the queue (guarded by Fleet.mu)
	// stranded is when the fleet first saw no up server that could run the
	// job; zero while one could (guarded by Fleet.mu).
	stranded time.Time
	done     atomic.Bool
	// key and weight are what the job was counted as in Fleet.counts as it
	// was queued (guarded by Fleet.mu).
	key    placement.QueueKey
	weight int
}

var errFleetClosed = errors.New("fleet closed")

// ErrGaveUp is the cause of a job the fleet gave up on: it waited
// Options.MaxWait for a server that could run it to come up, or the servers
// that could run it asked (429 Retry-After) for a wait beyond its Timeout
// or MaxWait. It is not worth retrying.
var ErrGaveUp = errors.New("no server that could run it came up within max_wait")

// NewFleet returns a fleet of servers and starts its dispatcher and its
// monitor, which probes every server at once and then periodically; Close
// stops them.
func NewFleet(servers []ServerConfig, opts Options) *Fleet {
	if opts.Policy == nil {
		opts.Policy = placement.Default
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	f := &Fleet{
		opts: opts, policy: opts.Policy, log: opts.Logger, now: opts.Now,
		byName: make(map[string]*fleetServer, len(servers)), idle: make(chan *start), workerIdle: workerIdle,
		wake: make(chan struct{}, 1), monitorWake: make(chan struct{}, 1),
		byID: map[uint64]*fleetJob{}, counts: map[placement.QueueKey]placement.QueueCount{}, running: map[chat.Purpose]int{},
		models: maps.Clone(opts.Models), jobTimes: map[string]meanAcc{},
		changed: make(chan struct{}), probes: newProbeTimes(opts), names: map[string]bool{},
	}
	if f.models == nil {
		f.models = map[string]placement.ModelView{}
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
	f.hc = hc
	for _, sc := range servers {
		s := newServer(sc, client.New(sc.Config, hc))
		f.servers = append(f.servers, s)
		f.byName[sc.Name] = s
	}
	for _, m := range slices.Sorted(maps.Keys(opts.JudgeModels)) {
		f.learnLocked(m)
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.wg.Add(2)
	go f.loop()
	go f.monitor()
	return f
}

// Submit queues a job; it never blocks. j.Done is called exactly once.
func (f *Fleet) Submit(ctx context.Context, j *Job) {
	f.SubmitAll(ctx, []*Job{j})
}

// SubmitAll queues jobs together, in order, under one context; it never
// blocks, and each job's Done is called exactly once, as with Submit. The
// policy sees them all at once, as the simulation shows it a phase: jobs
// submitted one by one may be placed while the rest of their phase is still
// being submitted.
func (f *Fleet) SubmitAll(ctx context.Context, jobs []*Job) {
	if ctx == nil {
		ctx = context.Background()
	}
	now := f.now()
	var refused []droppedJob
	f.mu.Lock()
	for _, j := range jobs {
		f.learnLocked(j.Request.Model)
		q := &fleetJob{job: j, ctx: ctx, enqueued: now}
		if err := f.refuseLocked(ctx, j); err != nil {
			refused = append(refused, droppedJob{q: q, err: err})
			continue
		}
		f.nextID++
		q.id = f.nextID
		f.enqueueLocked(q)
		f.watchers.Add(1)
		q.stop = context.AfterFunc(ctx, func() {
			defer f.watchers.Done()
			f.dropQueued(q)
		})
	}
	queued := len(refused) < len(jobs)
	if queued {
		f.notifyLocked()
	}
	f.mu.Unlock()
	for _, r := range refused {
		f.finish(r.q, chat.Result{}, r.err)
	}
	if queued {
		f.signal()
	}
}

// refuseLocked says why j cannot be queued, or nil when it can.
func (f *Fleet) refuseLocked(ctx context.Context, j *Job) *chat.Error {
	model := j.Request.Model
	switch {
	case f.closed:
		return &chat.Error{Class: chat.ClassCanceled, Model: model, Message: "fleet closed", Err: errFleetClosed}
	case ctx.Err() != nil:
		return canceledErr(ctx, model, "", "before it was queued")
	}
	if why := f.unservableLocked(model, j.Pin); why != "" {
		return &chat.Error{Class: chat.ClassHTTP4xx, Server: j.Pin, Model: model, Message: why}
	}
	return nil
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
func (f *Fleet) finish(q *fleetJob, res chat.Result, err error) {
	if !q.done.CompareAndSwap(false, true) {
		return
	}
	if q.job.Done != nil {
		q.job.Done(res, err)
	}
}

func canceledErr(ctx context.Context, model, server, when string) *chat.Error {
	cause := context.Cause(ctx)
	return &chat.Error{Class: chat.ClassCanceled, Server: server, Model: model,
		Message: fmt.Sprintf("cancelled %s (%v)", when, cause), Err: cause}
}

// Offered returns each server's models as the server lists them, for
// servers whose models are known.
func (f *Fleet) Offered() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string][]string, len(f.servers))
	for _, s := range f.servers {
		if s.listed != nil {
			out[s.cfg.Name] = slices.Sorted(slices.Values(s.listed))
		}
	}
	return out
}

// Close cancels queued jobs (Done with chat.ClassCanceled) and in-flight ones,
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
		f.queue, f.views, f.goneN, f.dirty = nil, nil, 0, false
		// The running jobs: each slot holds its job's cancel (startLocked),
		// set under this lock, so none that starts is missed.
		for _, s := range f.servers {
			for i := range s.slots {
				if sl := &s.slots[i]; sl.busy && sl.cancel != nil {
					sl.cancel(errFleetClosed)
				}
			}
		}
		f.notifyLocked()
	}
	f.mu.Unlock()
	f.cancel()
	for _, q := range dropped {
		f.finish(q, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Model: q.job.Request.Model,
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

// wakeMonitor tells the monitor its schedule changed.
func (f *Fleet) wakeMonitor() {
	select {
	case f.monitorWake <- struct{}{}:
	default:
	}
}
