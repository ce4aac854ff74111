package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/runner/ledger"
)

// Dispatcher is what the runner needs of the fleet: gpu.Fleet implements it.
type Dispatcher interface {
	Submit(ctx context.Context, j *gpu.Job)
	State() []gpu.ServerState
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
	// Heartbeat publishes a snapshot at least this often while the run is
	// live, so the fleet panel moves (default 500ms).
	Heartbeat time.Duration
	// Backoff is the wait before retry n (1-based) of a transient error;
	// default 250ms·2^(n-1), capped at 5s. A 429's Retry-After wins when longer.
	Backoff func(n int) time.Duration
	// ExportDir is where Export writes (default the ledger's folder).
	ExportDir string
	// RefreshJudges ignores cached verdicts (--judge-refresh).
	RefreshJudges bool
}

// Run is one battery run: phase 1 inference, phase 2 judgment, and the
// re-judging and judge switching a user asks for afterwards.
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
	infos  []TestInfo
	tindex map[string]int
	mindex map[string]int
	judges map[string]config.Judge

	ctx    context.Context // the run's phases; Stop cancels it
	cancel context.CancelFunc
	jctx   context.Context // judging after the phases (re-judge); Close cancels it
	jstop  context.CancelFunc

	mu            sync.Mutex
	table         *cellTable
	counts        Counts
	tokens        int64
	status        RunStatus
	phase         Phase
	message       string
	started       time.Time
	ended         time.Time
	active        string          // judge in view
	wanted        map[string]bool // judges whose verdicts are being produced
	inflight      int             // inference jobs not yet settled (including waiting retries)
	jinflight     int             // judge jobs not yet settled
	judgeStarts   bool            // phase 2 has begun (two-phase) or judging is pipelined
	round         map[CellRef]int // re-judge rounds per cell, for fresh samples
	tallies       map[tallyKey]*tally
	pendingJury   map[tallyKey]*Judgment // a jury verdict a re-judge being planned replaces
	verdictsDirty bool
	stopping      bool
	finished      bool // the phases have ended (set when the last work settles)
	recorded      bool // ...and the ledger says so: snapshots are Final from here on
	closing       bool // Close has begun: no new judge work is taken
	submitted     bool // Start got as far as submitting work
	failure       string
	endStatus     RunStatus // what the run ends as, once the ledger has it
	endMessage    string
	failovers     map[[3]int]int // inference attempts a cell lost to servers going away
	seq           uint64

	pub      *publisher
	done     chan struct{} // closed when the phases end
	closed   chan struct{}
	closeOne sync.Once
	wg       sync.WaitGroup // retry timers and other helpers
}

// New prepares a run; nothing is sent until Start.
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
	repeat := cfg.Run.Repeat
	if repeat < 1 {
		repeat = 1
	}
	r := &Run{
		cfg: cfg, opts: opts, log: opts.Logger, led: opts.Ledger, fleet: opts.Fleet, now: opts.Now,
		id: opts.RunID, models: cfg.Models, tests: cfg.Tests,
		tindex: map[string]int{}, mindex: map[string]int{}, judges: map[string]config.Judge{},
		wanted: map[string]bool{}, round: map[CellRef]int{},
		done: make(chan struct{}), closed: make(chan struct{}),
		status: RunRunning, phase: PhaseInference,
	}
	ids := make([]string, len(cfg.Tests))
	r.infos = make([]TestInfo, len(cfg.Tests))
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
	r.table = newCellTable(ids, cfg.Models, repeat)
	r.counts.Pending = len(ids) * len(cfg.Models) * repeat
	r.active, r.wanted = initialJudges(cfg)
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.jctx, r.jstop = context.WithCancel(context.Background())
	r.pub = newPublisher(opts.Interval, opts.Heartbeat, r.snapshot)
	return r, nil
}

// initialJudges decides the judge in view and the judges to run.
func initialJudges(cfg *config.Config) (string, map[string]bool) {
	wanted := map[string]bool{}
	switch cfg.Scoring.Mode {
	case "deterministic", "":
		return "", wanted
	case "jury":
		for _, j := range cfg.Scoring.Judges {
			wanted[j.Name] = true
		}
		active := JuryName
		if cfg.Scoring.Active != "" {
			active = cfg.Scoring.Active
		}
		return active, wanted
	default: // judge
		name := cfg.Scoring.Active
		if name == "" || name == JuryName {
			name = cfg.Scoring.Judges[0].Name
		}
		wanted[name] = true
		return name, wanted
	}
}

func defaultBackoff(n int) time.Duration {
	d := 250 * time.Millisecond << (n - 1)
	if d > 5*time.Second || d <= 0 {
		d = 5 * time.Second
	}
	return d
}

// ID is the run's id in the ledger.
func (r *Run) ID() string { return r.id }

// Snapshots is the channel of snapshots. It is coalesced: a slow reader
// sees fewer, newer snapshots, never an old one after a newer one, and
// always the last. It stays open after the phases end (re-judging sends
// more) until Close.
func (r *Run) Snapshots() <-chan *BatteryRun { return r.pub.out }

// Start records the run and submits every cell. It returns at once.
func (r *Run) Start() error {
	r.mu.Lock()
	r.started = r.now()
	r.mu.Unlock()
	scoring, _ := json.Marshal(r.cfg.Scoring)
	ids := make([]string, len(r.tests))
	for i, t := range r.tests {
		ids[i] = t.ID
	}
	row := ledger.RunRow{
		ID: r.id, Name: r.cfg.Name, Status: string(RunRunning), ScoringMode: r.scoringMode(),
		ConfigJSON: r.cfg.RedactedJSON(), ScoringJSON: string(scoring),
		Models: r.models, Tests: ids, Repeat: r.table.repeat, StartedAt: r.started,
	}
	if err := r.led.CreateRun(row); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	for ti := range r.tests {
		for mi := range r.models {
			for rep := 0; rep < r.table.repeat; rep++ {
				if err := r.led.PutCell(r.cellRow(r.table.at(ti, mi, rep))); err != nil {
					return fmt.Errorf("recording cells: %w", err)
				}
			}
		}
	}
	r.pub.start()
	r.mu.Lock()
	r.submitted = true
	r.inflight = len(r.tests) * len(r.models) * r.table.repeat
	r.judgeStarts = r.cfg.Run.Judging == "pipelined"
	r.mu.Unlock()
	// Submit in battery order, model-major within a test, so the first rows
	// fill first; placement decides what actually runs first.
	for ti := range r.tests {
		for mi := range r.models {
			for rep := 0; rep < r.table.repeat; rep++ {
				r.submitInference(ti, mi, rep, 1)
			}
		}
	}
	r.changed()
	return nil
}

func (r *Run) scoringMode() string {
	if r.cfg.Scoring.Mode == "" {
		return "deterministic"
	}
	return r.cfg.Scoring.Mode
}

// Stop cancels the run: queued and in-flight requests are cancelled, their
// cells say cancelled, and the run ends as stopped.
func (r *Run) Stop() {
	r.mu.Lock()
	if r.finished || r.stopping {
		r.mu.Unlock()
		return
	}
	r.stopping = true
	r.message = "stopping…"
	jstop := r.jstop
	r.mu.Unlock()
	r.cancel()
	jstop()
	r.changed()
}

// Done is closed when the run's phases have ended (completed or stopped).
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait blocks until the phases end, or ctx ends, and returns the latest snapshot.
func (r *Run) Wait(ctx context.Context) *BatteryRun {
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	return r.snapshot()
}

// Close stops anything still running (re-judging included), waits for it,
// publishes the last snapshot and closes the snapshot channel.
func (r *Run) Close() {
	r.closeOne.Do(func() {
		r.mu.Lock()
		r.closing = true
		started := r.submitted
		jstop := r.jstop
		r.mu.Unlock()
		r.Stop()
		jstop()
		if !started {
			// Nothing was submitted: there is no end to wait for.
			r.mu.Lock()
			r.finished, r.recorded = true, true
			if r.status == RunRunning {
				r.status = RunFailed
			}
			r.mu.Unlock()
			if r.led != nil {
				_ = r.led.FinishRun(r.id, string(RunFailed), r.now())
			}
			close(r.done)
		}
		<-r.done
		r.waitJudges()
		r.wg.Wait()
		r.pub.close()
		close(r.closed)
	})
}

// waitJudges waits until no judge job is outstanding (cancelled ones settle
// quickly once jctx is cancelled).
func (r *Run) waitJudges() {
	for {
		r.mu.Lock()
		n := r.jinflight
		r.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-r.pub.settled:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Note shows err in the run's status line (for requests the UI makes).
func (r *Run) Note(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.message = err.Error()
	r.mu.Unlock()
	r.changed()
}

// changed tells the publisher that state changed.
func (r *Run) changed() { r.pub.poke() }

// snapshot builds an immutable snapshot of the run now.
func (r *Run) snapshot() *BatteryRun {
	fleet := r.fleet.State()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if r.verdictsDirty {
		r.countVerdicts()
	}
	b := &BatteryRun{
		Seq: r.seq, ID: r.id, Name: r.cfg.Name, Status: r.status, Phase: r.phase, Message: r.message,
		Models: r.models, Tests: r.infos, Repeat: r.table.repeat, Rows: r.table.publish(),
		Judges: r.judgeNames(), ActiveJudge: r.active, ScoringMode: r.scoringMode(),
		Started: r.started, Ended: r.ended, Counts: r.counts, TokensGenerated: r.tokens,
		JudgeInFlight: r.jinflight, Fleet: fleet, Final: r.recorded,
	}
	return b
}

func (r *Run) judgeNames() []string {
	var out []string
	for _, j := range r.cfg.Scoring.Judges {
		out = append(out, j.Name)
	}
	if len(out) >= 2 {
		out = append(out, JuryName)
	}
	return out
}

func testInfo(t config.Test) TestInfo {
	system, prompt := promptText(t)
	return TestInfo{ID: t.ID, Name: t.Name, Category: t.Category, System: system, Prompt: prompt,
		Tools: t.Tools, Criteria: t.Criteria, Reference: t.Reference}
}

// finishIfDone ends the run when no work is left. Callers hold r.mu.
func (r *Run) finishIfDone() {
	if r.finished || r.inflight > 0 || r.jinflight > 0 {
		return
	}
	if !r.stopping && r.needsJudging() {
		return // phase 2 is about to be submitted
	}
	// The status, phase and message change only when the ledger has the
	// end (closeOut): a snapshot that says stopped or completed is Final.
	r.finished = true
	r.ended = r.now()
	switch {
	case r.failure != "":
		r.endStatus, r.endMessage = RunFailed, r.failure
	case r.stopping:
		r.endStatus, r.endMessage = RunStopped, "stopped"
	default:
		r.endStatus, r.endMessage = RunCompleted, ""
		if msg := r.judgeUnusable(); msg != "" {
			r.endStatus, r.endMessage = RunFailed, msg
		}
	}
	go r.closeOut()
}

// closeOut records the end of the run and releases Wait.
func (r *Run) closeOut() {
	r.mu.Lock()
	status, ended := r.endStatus, r.ended
	r.mu.Unlock()
	if n, err := r.led.CancelOpen(r.id, ended); err != nil {
		r.log.Error("ledger: cancelling open requests", "err", err)
	} else if n > 0 {
		r.log.Warn("ledger: requests left open at the end were marked canceled", "n", n)
	}
	if err := r.led.FinishRun(r.id, string(status), ended); err != nil {
		r.log.Error("ledger: finishing run", "err", err)
	}
	r.mu.Lock()
	r.status, r.message, r.phase = r.endStatus, r.endMessage, PhaseDone
	r.recorded = true
	r.mu.Unlock()
	r.pub.finalize()
	close(r.done)
}

// needsJudging reports whether phase 2 has work that is not yet submitted.
// Callers hold r.mu.
func (r *Run) needsJudging() bool {
	if len(r.wanted) == 0 || r.judgeStarts {
		return false
	}
	return r.counts.Completed > 0
}

// countVerdicts recounts the verdicts of the judge in view. Callers hold r.mu.
func (r *Run) countVerdicts() {
	c := &r.counts
	c.Pass, c.Fail, c.Warn, c.JudgeError, c.Judged, c.ToJudge = 0, 0, 0, 0, 0, 0
	r.verdictsDirty = false
	if r.active == "" {
		return
	}
	for _, row := range r.table.rows {
		for i := range row.Cells {
			cell := &row.Cells[i]
			if cell.Status != Completed {
				continue
			}
			c.ToJudge++
			j := cell.Judgment(r.active)
			if j == nil || j.Status != JudgmentDone {
				continue
			}
			c.Judged++
			switch j.Verdict {
			case VerdictPass:
				c.Pass++
			case VerdictFail:
				c.Fail++
			case VerdictWarn:
				c.Warn++
			default:
				c.JudgeError++
			}
		}
	}
}

// judgeUnusable says why the judge in view could not be used at all: every
// verdict it gave is a judge error. Callers hold r.mu.
func (r *Run) judgeUnusable() string {
	if r.active == "" {
		return ""
	}
	r.countVerdicts()
	c := r.counts
	if c.Judged == 0 || c.JudgeError < c.Judged {
		return ""
	}
	return fmt.Sprintf("judge %s gave no usable verdict (%d judge errors): check its server, model and key, then re-judge with `pitwall show %s`", r.active, c.JudgeError, r.id)
}

// fail marks the run as failed for a reason that stops it being trusted
// (the ledger cannot be written). Callers hold r.mu.
func (r *Run) fail(msg string) {
	if r.failure == "" {
		r.failure = msg
		r.message = msg
	}
}
