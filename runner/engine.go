package runner

import (
	"context"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// engine is the state the loop owns. Only the loop goroutine reads or
// writes it, so it needs no lock. Its fields are grouped by concern in the
// structs it embeds; embedding keeps each field e.field.
type engine struct {
	r     *Run
	table *cellTable
	plan  scoring.Plan // Plan.InView changes when the user switches judges
	// wanted are the judges whose verdicts are produced (those the plan
	// runs, and any the user switched to).
	wanted map[string]bool
	life   lifecycle // where the run is (lifecycle.go); move changes it

	report runReport
	phases phases
	totals totals
	pub    publishing

	// The run's work, each part with the state it owns: inference of
	// cells (inference.go, inferencequeue.go, agent.go), judging of
	// answers (judging.go, judgequeue.go, verdicts.go, spend.go), judge
	// requests answered once for many (shared.go) and batch judges
	// (batch.go, batch_gather.go).
	inference *inferencePart
	judges    *judgingPart
	sharing   *sharingPart
	batches   *batchingPart

	retrying map[request]bool // attempts waiting out their backoff, inference's and judges'

	// ack hears the end of the ledger's asynchronous writes (a request's
	// start and end, a cell, a verdict): a failure comes back to the loop
	// as an event and fails the run, as a synchronous write's would.
	ack ledger.Ack
}

// runReport is what the run says of itself and how it ends: what its
// snapshots and its ledger row show.
type runReport struct {
	endAs   state.RunStatus // what a stopping run ends as: stopped, or failed
	phase   state.Phase
	status  state.RunStatus
	message string
	failure string // why the run failed (the ledger), once it has
	started time.Time
	ended   time.Time
	// closeWanted is Close's request, carried out once the run has ended.
	closeWanted bool
	// disowned: another process resumed the run, so its end is that
	// process's to record, not this one's.
	disowned bool
}

// phases are the contexts the run's work is sent under; cancelling one
// cancels what was sent under it.
type phases struct {
	phaseCtx    context.Context // the run's phases; Stop cancels it
	phaseCancel context.CancelFunc
	judgeCtx    context.Context // judging after the end; Stop and Close cancel it
	judgeCancel context.CancelFunc
}

// totals are the run's running totals, for its snapshots.
type totals struct {
	tokens    int64
	judgeCut  int              // judge requests whose prompt the server cut (state.BatteryRun.JudgePromptsCut)
	judging   state.JudgeSpend // what the judges spent
	completed int              // cells whose inference completed
}

// inferencePart is the inference in flight and waiting (inferencequeue.go,
// inference.go, agent.go).
type inferencePart struct {
	e        *engine
	inflight int // inference attempts not settled, waiting retries included
	// iqueue are cells whose first inference attempt waits for room in
	// the inference window.
	iqueue    []cellPos
	failovers map[cellPos]int // inference attempts a cell lost to servers going away
}

// judgingPart is the judging in flight and waiting (judgequeue.go,
// judging.go, verdicts.go, spend.go), and the tallies of verdicts.
type judgingPart struct {
	e         *engine
	jinflight int // judge samples not settled, waiting retries included
	// jqueue are completed cells waiting for judges, planned as the window
	// allows; jqueued counts their judge samples; jsets are the lists of
	// judges they name.
	jqueue  []queuedCell
	jsets   [][]string
	jqueued int
	round   map[cellPos]int // a cell's re-judges: its samples' round (seed, stale answers)
	tallies map[tallyKey]*tally
	// pendingJury is a jury verdict a re-judge being planned replaces.
	pendingJury map[tallyKey]*state.Judgment
}

// sharingPart is judge requests answered once for many: the same prompt
// asked again while the first asking is in flight (shared.go).
type sharingPart struct {
	e *engine
	// shared maps a judge cache key to the request in flight for it, and
	// followers lists the requests waiting on that one's answer.
	shared    map[string]*judgeAttempt
	followers map[*judgeAttempt][]*judgeAttempt
}

// batchingPart is the judging of batch judges: requests gathering for one
// batch (batch_gather.go), and the batches submitted, polled and read
// (batch.go).
type batchingPart struct {
	e       *engine
	gathers map[gatherKey]*batchGather
}

// publishing is when the next snapshot goes out (Run.loop, publish).
type publishing struct {
	dirty   bool // something changed since the last snapshot
	seq     uint64
	lastPub time.Time
}

// evLedgerFailed is an asynchronous ledger write that failed.
type evLedgerFailed struct{ err error }

func newEngine(r *Run, table *cellTable, plan scoring.Plan) *engine {
	e := &engine{r: r, table: table, plan: plan, wanted: map[string]bool{}, life: idle,
		report:   runReport{phase: state.PhaseInference, status: state.RunRunning},
		retrying: map[request]bool{}}
	e.inference = &inferencePart{e: e, failovers: map[cellPos]int{}}
	e.judges = &judgingPart{e: e, round: map[cellPos]int{}, tallies: map[tallyKey]*tally{},
		pendingJury: map[tallyKey]*state.Judgment{}}
	e.sharing = &sharingPart{e: e, shared: map[string]*judgeAttempt{}, followers: map[*judgeAttempt][]*judgeAttempt{}}
	e.batches = &batchingPart{e: e}
	for _, n := range plan.Running() {
		e.wanted[n] = true
	}
	e.phases.phaseCtx, e.phases.phaseCancel = context.WithCancel(context.Background())
	e.ack = func(err error) {
		// Run by the ledger's committing goroutine, which may be this
		// loop's own inside a synchronous write: it only posts.
		if err != nil {
			r.events.post(evLedgerFailed{err})
		}
	}
	return e
}
