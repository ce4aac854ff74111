package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/telemetry"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// Dispatcher is what the runner needs of the fleet: gpu.Fleet implements it.
type Dispatcher interface {
	SubmitAll(ctx context.Context, jobs []*gpu.Job)
	State() []telemetry.ServerState
}

// Options wires a run to the world.
type Options struct {
	RunID  string // default ledger.NewRunID(now)
	Fleet  Dispatcher
	Ledger *ledger.Ledger
	Logger *slog.Logger
	Now    func() time.Time
	// Interval is the least time between two snapshots (default 100ms); a
	// change after a quiet spell is published at once.
	Interval time.Duration
	// Heartbeat publishes a snapshot at least this often while work is in
	// flight, so the fleet panel moves (default 500ms).
	Heartbeat time.Duration
	// Backoff is the wait before retry n (1-based) of a transient error;
	// default 250ms·2^(n-1), capped at 5s. A 429's Retry-After wins when longer.
	Backoff func(n int) time.Duration
	// ExportDir is where Export writes (default the ledger's folder).
	ExportDir string
	// RefreshJudges ignores cached verdicts (--judge-refresh).
	RefreshJudges bool
	// JudgeSamples, when above 0, is the votes per judge per cell of what a
	// reopened run judges from now on (pitwall rejudge --samples); the
	// verdicts it already has keep theirs.
	JudgeSamples int
}

// Run is one battery run: phase 1 inference, phase 2 judgment, and the
// re-judging and judge switching a user asks for afterwards.
//
// One goroutine (the loop) owns everything that changes: the cells, the
// lifecycle, what is in flight. Fleet callbacks, retry timers and the
// methods below only put events on its queue, which never blocks them.
type Run struct {
	cfg    *config.Config
	opts   Options
	log    *slog.Logger
	led    *ledger.Ledger
	fleet  Dispatcher
	now    func() time.Time
	id     string
	models []string
	tests  []config.Test
	infos  []state.TestInfo
	tindex map[string]int
	mindex map[string]int
	judges map[string]config.Judge
	repeat int

	events *queue
	e      *engine // the loop's; nothing else touches it
	out    chan *state.BatteryRun
	last   atomic.Pointer[state.BatteryRun]
	done   chan struct{} // closed when the end is in the ledger
	closed chan struct{} // closed when the loop has returned
	// started is set by Start: Close of a run never started ends it at once.
	started  atomic.Bool
	closeOne sync.Once

	// owner is the gate every request of the run passes (owner.go);
	// beforeSend is its check, made once for every job to carry.
	owner      *ownerGate
	beforeSend func(context.Context) error
}

// errClosed is what requests to a closed run get.
var errClosed = errors.New("the run is closed")

// New prepares a run; nothing is sent until Start. Close releases it.
func New(cfg *config.Config, opts Options) (*Run, error) {
	if opts.Fleet == nil || opts.Ledger == nil {
		return nil, fmt.Errorf("runner: a fleet and a ledger are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 500 * time.Millisecond
	}
	if opts.Backoff == nil {
		opts.Backoff = defaultBackoff
	}
	if opts.RunID == "" {
		opts.RunID = ledger.NewRunID(opts.Now())
	}
	if len(cfg.Tests) == 0 {
		return nil, fmt.Errorf("%s: the battery has no tests to run (check `battery` and --tests)", cfg.Path)
	}
	if len(cfg.Models) == 0 {
		return nil, fmt.Errorf("%s: no models to run (check `models` and --models)", cfg.Path)
	}
	r := &Run{
		cfg: cfg, opts: opts, log: opts.Logger, led: opts.Ledger, fleet: opts.Fleet, now: opts.Now,
		id: opts.RunID, models: cfg.Models, tests: cfg.Tests, repeat: max(cfg.Run.Repeat, 1),
		tindex: map[string]int{}, mindex: map[string]int{}, judges: map[string]config.Judge{},
		events: newQueue(), out: make(chan *state.BatteryRun, 1),
		done: make(chan struct{}), closed: make(chan struct{}),
	}
	ids := make([]string, len(cfg.Tests))
	r.infos = make([]state.TestInfo, len(cfg.Tests))
	for i, t := range cfg.Tests {
		ids[i] = t.ID
		r.tindex[t.ID] = i
		r.infos[i] = testInfo(t)
	}
	for i, m := range cfg.Models {
		r.mindex[m] = i
	}
	for _, j := range cfg.Scoring.Judges {
		r.judges[j.Name] = j
	}
	r.owner = newOwnerGate(r.led, r.id, r.now, func(err error) { r.events.post(evLedgerFailed{err}) })
	r.beforeSend = r.owner.check
	r.e = newEngine(r, newCellTable(ids, cfg.Models, r.repeat), cfg.Plan())
	go r.loop()
	return r, nil
}

func defaultBackoff(n int) time.Duration {
	d := 250 * time.Millisecond << (n - 1)
	if d > 5*time.Second || d <= 0 {
		d = 5 * time.Second
	}
	return d
}

func testInfo(t config.Test) state.TestInfo {
	system, prompt := t.PromptText()
	return state.TestInfo{ID: t.ID, Name: t.Name, Category: t.Category, Severity: t.Severity, System: system, Prompt: prompt,
		Tools: t.Tools, Criteria: t.Criteria, Reference: t.Reference}
}

// ID is the run's id in the ledger.
func (r *Run) ID() string { return r.id }

// Snapshots is the channel of snapshots. It is coalesced: a slow reader
// sees fewer, newer snapshots, never an old one after a newer one, and
// always the last. It stays open after the phases end (re-judging sends
// more) until Close.
func (r *Run) Snapshots() <-chan *state.BatteryRun { return r.out }

// Done is closed when the run's phases have ended and the ledger says so.
func (r *Run) Done() <-chan struct{} { return r.done }

// call runs fn on the loop and returns its error; errClosed once the loop
// has returned.
func (r *Run) call(fn func(e *engine) error) error {
	reply := make(chan error, 1)
	if !r.events.post(evCall{fn: fn, reply: reply}) {
		return errClosed
	}
	select {
	case err := <-reply:
		return err
	case <-r.closed:
		return errClosed
	}
}

// Start records the run and every cell in the ledger, then hands all the
// inference work to the fleet at once. It returns when the work is queued.
func (r *Run) Start() error {
	r.started.Store(true)
	return r.call(func(e *engine) error { return e.start() })
}

// Stop cancels the run: queued and in-flight requests are cancelled, their
// cells say so, and the run ends as stopped. After the end, Stop cancels a
// re-judge in progress instead, and the cells get their earlier verdicts
// back.
func (r *Run) Stop() { r.events.post(evStop{}) }

// Close stops anything still running (re-judging included), waits for it,
// publishes the last snapshot and closes the snapshot channel.
func (r *Run) Close() {
	r.closeOne.Do(func() {
		r.events.post(evClose{})
		<-r.closed
	})
}

// Wait blocks until the phases end, or ctx ends, and returns the latest
// snapshot.
func (r *Run) Wait(ctx context.Context) *state.BatteryRun {
	select {
	case <-r.done:
		return r.last.Load()
	case <-ctx.Done():
	}
	var b *state.BatteryRun
	if r.call(func(e *engine) error { b = e.snapshot(); return nil }) != nil {
		return r.last.Load()
	}
	return b
}

// Note shows err in the run's status line (for requests the UI makes).
func (r *Run) Note(err error) {
	if err == nil {
		return
	}
	_ = r.call(func(e *engine) error { e.report.message = err.Error(); e.pub.dirty = true; return nil })
}

// SwitchJudge puts another judge (or the jury) in view and judges what it
// has not judged yet; verdicts of other judges are kept.
func (r *Run) SwitchJudge(name string) error {
	return r.call(func(e *engine) error { return taken(e, e.switchJudge(name)) })
}

// ViewJudge puts a judge in view without sending it work, as `show
// --judge` reads a run: its verdicts, where it gave any.
func (r *Run) ViewJudge(name string) error {
	return r.call(func(e *engine) error { return taken(e, e.viewJudge(name)) })
}

// Rejudge judges the given cells again with a judge ("" = the one in view),
// with fresh samples; inference is never repeated.
func (r *Run) Rejudge(cells []state.CellRef, name string) error {
	return r.call(func(e *engine) error { return taken(e, e.rejudge(cells, name)) })
}

// RejudgeAll re-judges every completed cell.
func (r *Run) RejudgeAll(name string) error {
	return r.call(func(e *engine) error { return taken(e, e.rejudge(e.completedRefs(), name)) })
}

// taken publishes a snapshot that shows the judge work just taken, so that
// once the call returns, Latest is a snapshot that has it (or its end): a
// screen that waits for that snapshot knows what s would cancel.
func taken(e *engine, err error) error {
	e.publish()
	return err
}

// Latest is the last snapshot published (nil before the first).
func (r *Run) Latest() *state.BatteryRun { return r.last.Load() }

// Export writes this run's export in format (history.Formats) next to the
// ledger (or to Options.ExportDir) and says where.
func (r *Run) Export(format string) (string, error) {
	inView := ""
	if b := r.last.Load(); b != nil {
		inView = b.Plan.InView
	}
	return history.ExportFile(r.led, r.opts.ExportDir, r.id, inView, format)
}

// Reopen brings a finished run back from the ledger as a live Run that can
// be browsed, re-judged and switched between judges; nothing is sent again
// for inference. cfg is the run's config, loaded again: its battery must
// still hold the run's tests (their prompts are what the judges read). It
// is a new Run restored from the run's snapshot.
func Reopen(cfg *config.Config, id string, opts Options) (*Run, error) {
	if opts.Ledger == nil {
		return nil, fmt.Errorf("runner: a ledger is required")
	}
	row, err := opts.Ledger.Run(id)
	if err != nil {
		return nil, err
	}
	again, err := restoredConfig(cfg, row)
	if err != nil {
		return nil, err
	}
	if opts.JudgeSamples > 0 {
		again.Scoring.Samples = opts.JudgeSamples
	}
	opts.RunID = row.ID
	snap, err := history.LoadSnapshot(opts.Ledger, row.ID, "")
	if err != nil {
		return nil, err
	}
	r, err := New(again, opts)
	if err != nil {
		return nil, err
	}
	r.started.Store(true)
	if err := r.call(func(e *engine) error { e.restore(snap); return nil }); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}
