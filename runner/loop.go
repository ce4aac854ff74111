package runner

import (
	"errors"
	"fmt"
	"time"

	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// loop is the run's one goroutine of its own: it takes events, moves the
// lifecycle on, and publishes snapshots, until the run is closed.
func (r *Run) loop() {
	e := r.e
	beat := time.NewTicker(r.opts.Heartbeat)
	defer beat.Stop()
	// alive tells the ledger this process still runs the run, so that a
	// reader can tell a run in progress from one whose process died.
	alive := time.NewTicker(ledger.HeartbeatEvery)
	defer alive.Stop()
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	armed := false
	for e.life != closed {
		select {
		case <-r.events.ready:
			for _, ev := range r.events.take() {
				e.handle(ev)
			}
		case <-flush.C:
			armed = false
		case <-alive.C:
			if e.life.live() {
				e.heartbeat()
			}
		case <-beat.C:
			// The fleet panel moves while the run is open, after its end
			// too: GPUs and servers go on changing.
			if e.life != idle {
				e.pub.dirty = true
			}
		}
		e.advance()
		if !e.pub.dirty || e.life == closed {
			continue
		}
		if wait := r.opts.Interval - time.Since(e.pub.lastPub); wait > 0 {
			if !armed {
				flush.Reset(wait)
				armed = true
			}
			continue
		}
		e.publish()
	}
	flush.Stop()
	e.phases.phaseCancel()
	if e.phases.judgeCancel != nil {
		e.phases.judgeCancel()
	}
	for _, ev := range r.events.close() {
		if c, ok := ev.(evCall); ok {
			c.reply <- errClosed
		}
	}
	e.publish()
	close(r.out)
	close(r.closed)
}

// handle takes one event.
func (e *engine) handle(ev any) {
	switch ev := ev.(type) {
	case evDispatched:
		ev.a.dispatched(ev.server, ev.loading)
	case evDone:
		delete(e.retrying, ev.a)
		ev.a.done(ev.res, ev.err)
	case evRetry:
		if !e.retrying[ev.a] {
			return // cancelled while its timer fired
		}
		delete(e.retrying, ev.a)
		ev.a.retry()
	case evStop:
		e.stop(state.RunStopped, "stopping…")
	case evClose:
		e.report.closeWanted = true
		switch e.life {
		case idle:
			e.report.status, e.report.message = state.RunFailed, "closed before it started"
			e.move(closed)
		case inferring, judging:
			e.stop(state.RunStopped, "stopping…")
		}
	case evCall:
		ev.reply <- ev.fn(e)
	case evLedgerFailed:
		e.fail(ev.err)
	}
}

// stop cancels the run's work. During the phases the run ends as status;
// after the end, it cancels a re-judge in progress.
func (e *engine) stop(status state.RunStatus, msg string) {
	e.judges.dropJudgeQueue()
	switch e.life {
	case inferring, judging:
		e.report.endAs, e.report.message = status, msg
		e.move(stopping)
		e.phases.phaseCancel()
		e.cancelRetries(func(request) bool { return true })
	case ended, closing:
		if e.phases.judgeCancel != nil {
			e.phases.judgeCancel()
			e.cancelRetries(func(a request) bool { return a.base().ctx.Err() != nil }) // the re-judge's
		}
	}
}

// cancelRetries settles, as cancelled, the attempts waiting out a backoff
// that match. One whose timer has already fired settles when its event
// arrives, as the context it ran under is done.
func (e *engine) cancelRetries(match func(request) bool) {
	for a := range e.retrying {
		if !match(a) || !a.base().timer.Stop() {
			continue
		}
		delete(e.retrying, a)
		err := &chat.Error{Class: chat.ClassCanceled, Message: "stopped before retry"}
		a.settled(chat.Result{}, err)
	}
}

// advance moves the lifecycle on as far as the work in flight allows.
func (e *engine) advance() {
	e.inference.feedInference()
	e.judges.feedJudging()
	for {
		before := e.life
		if e.life != inferring || e.inference.inflight == 0 {
			e.batches.flushBatches() // inference is over: no batch waits for more
		}
		switch e.life {
		case inferring:
			if e.inference.inflight > 0 {
				break
			}
			if e.judges.phaseTwo() > 0 || e.judges.judgeWork() > 0 {
				e.move(judging)
				e.report.phase = state.PhaseJudgment
				e.judges.feedJudging()
				break
			}
			e.finish()
		case judging:
			if e.judges.judgeWork() == 0 {
				e.finish()
			}
		case stopping:
			if e.inference.inflight == 0 && e.judges.jinflight == 0 {
				e.finish()
			}
		case ended:
			if e.report.closeWanted {
				e.move(closing)
				e.stop("", "")
			}
		case closing:
			if e.judges.jinflight == 0 && len(e.retrying) == 0 {
				e.move(closed)
			}
		}
		if e.life == before {
			return
		}
	}
}

// finish records the end of the run's phases in the ledger, publishes the
// final snapshot and releases Wait.
func (e *engine) finish() {
	r := e.r
	e.report.ended = r.now()
	status, msg := state.RunCompleted, ""
	switch {
	case e.report.failure != "":
		status, msg = state.RunFailed, e.report.failure
	case e.life == stopping:
		status, msg = e.report.endAs, "stopped"
	default:
		if why := e.judgeUnusable(); why != "" {
			status, msg = state.RunFailed, why
		}
	}
	if !e.report.disowned {
		// Every queued write is on disk before the end is.
		if err := r.led.Flush(); err != nil && e.report.failure == "" {
			status, msg = state.RunFailed, e.ledgerFailure(err)
		}
		if n, err := r.led.CancelOpen(r.id, e.report.ended); err != nil {
			status, msg = state.RunFailed, e.ledgerFailure(err)
		} else if n > 0 {
			r.log.Warn("ledger: requests left open at the end were marked canceled", "n", n)
		}
		if err := r.led.FinishRun(r.id, string(status), msg, e.report.ended); err != nil {
			status, msg = state.RunFailed, e.ledgerFailure(err)
		}
		r.owner.release()
	}
	e.report.status, e.report.message, e.report.phase = status, msg, state.PhaseDone
	e.move(ended)
	e.publish()
	close(r.done)
}

// heartbeat tells the ledger the run's process is alive. Another process
// that resumed the run meanwhile owns it now: this one stops (fail).
func (e *engine) heartbeat() {
	took := time.Now()
	if err := e.r.led.Heartbeat(e.r.id, e.r.now()); err != nil {
		e.fail(err)
		return
	}
	e.r.owner.confirm(took)
}

// fail records a ledger write that failed: the run stops sending, ends as
// failed with a message naming the ledger, and what was written before
// stays readable. A write refused because another process took the run
// over (ledger.ErrTakenOver) stops it too, but the run is that process's
// now: this one records nothing more of it (the ledger would refuse it).
func (e *engine) fail(err error) {
	var taken *ledger.TakenOverError
	switch {
	case e.report.disowned:
		return
	case errors.As(err, &taken):
		// Said over an earlier failure: it is why nothing more is written.
		e.report.disowned = true
		e.report.failure = fmt.Sprintf("run %s was taken over by %s; this process stopped without changing it", e.r.id, taken.By)
	case e.report.failure != "":
		return
	default:
		e.report.failure = e.ledgerFailure(err)
	}
	e.report.message = e.report.failure
	e.pub.dirty = true
	switch e.life {
	case inferring, judging:
		e.stop(state.RunFailed, e.report.failure)
	case ended, closing:
		e.report.status = state.RunFailed
		e.stop("", "")
	}
}

func (e *engine) ledgerFailure(err error) string {
	return fmt.Sprintf("the ledger %s cannot be written (%v): the run stopped there; what it recorded before stays readable", e.r.led.Path(), err)
}

// judgeUnusable says why the judge in view could not be used at all: every
// verdict it gave is a judge error.
func (e *engine) judgeUnusable() string {
	if e.plan.InView == "" {
		return ""
	}
	c := e.table.tally(e.plan.InView)
	if c.Judged == 0 || c.JudgeError < c.Judged {
		return ""
	}
	errs := "judge errors"
	if c.JudgeError == 1 {
		errs = "judge error"
	}
	return fmt.Sprintf("judge %s gave no usable verdict (%d %s): check its server, model and key, then `pitwall rejudge %s` (or r in `pitwall show %s`)",
		e.plan.InView, c.JudgeError, errs, e.r.id, e.r.id)
}

// start records the run and its cells, then submits every inference job.
func (e *engine) start() error {
	r := e.r
	if e.life != idle {
		return fmt.Errorf("the run has already started")
	}
	e.report.started = r.now()
	ids := make([]string, len(r.tests))
	for i, t := range r.tests {
		ids[i] = t.ID
	}
	row := ledger.RunRow{
		ID: r.id, Name: r.cfg.Name, Status: string(state.RunRunning), ScoringMode: string(e.plan.Mode),
		ConfigJSON: r.cfg.RedactedJSON(), ScoringJSON: mustJSON(r.cfg.Scoring.Redacted()),
		Models: r.models, Tests: ids, Repeat: r.repeat, StartedAt: e.report.started,
		Owner: r.led.Self(), Heartbeat: e.report.started,
	}
	took := time.Now()
	if err := r.led.CreateRun(row); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	r.owner.hold(took)
	e.table.each(func(p cellPos) {
		r.led.QueueCell(e.inference.cellRow(e.table.at(p)), e.ack)
	})
	e.move(inferring)
	e.expectJudging()
	e.inference.queueInference()
	return nil
}

// expecter is a fleet that can be told of work to come (gpu.Fleet.Expect).
type expecter interface{ Expect(jobs map[string]int) }

// expectJudging tells the fleet how many judge requests of each model the
// judging will send (every cell, every sample; cached verdicts make it
// fewer), so that it may load the judge models as inference ends instead
// of after it.
func (e *engine) expectJudging() {
	x, ok := e.r.fleet.(expecter)
	if !ok || len(e.wanted) == 0 {
		return
	}
	cells := 0
	e.table.each(func(cellPos) { cells++ })
	jobs := map[string]int{}
	for _, name := range e.judges.wantedList() {
		if j, ok := e.r.judges[name]; ok {
			jobs[j.Model] += cells * e.judges.samples()
		}
	}
	x.Expect(jobs)
}

// restore makes the engine a finished run read back from the ledger.
func (e *engine) restore(b *state.BatteryRun) {
	e.table.restore(clipRows(b.Rows))
	e.totals.tokens = b.TokensGenerated
	e.report.started, e.report.ended = b.Started, b.Ended
	e.report.status, e.report.phase = b.Status, state.PhaseDone
	for _, row := range b.Rows {
		for i := range row.Cells {
			if row.Cells[i].Status == state.Completed {
				e.totals.completed++
			}
		}
	}
	e.move(ended)
	e.publish()
	close(e.r.done)
}

// snapshot builds an immutable snapshot of the run now.
func (e *engine) snapshot() *state.BatteryRun {
	r := e.r
	e.pub.seq++
	status := e.report.status
	if e.report.failure != "" {
		status = state.RunFailed
	}
	return &state.BatteryRun{
		Seq: e.pub.seq, ID: r.id, Name: r.cfg.Name, Status: status, Phase: e.report.phase, Message: e.report.message,
		Models: r.models, Tests: r.infos, Repeat: r.repeat, Rows: e.table.publish(),
		Plan: e.plan, Started: e.report.started, Ended: e.report.ended, Counts: e.table.tally(e.plan.InView),
		TokensGenerated: e.totals.tokens, JudgeInFlight: e.judges.judgeWork(), JudgePromptsCut: e.totals.judgeCut, Judging: e.totals.judging, Fleet: r.fleet.State(),
		Final: e.life >= ended,
	}
}

// publish puts a snapshot on the channel, replacing one the reader has not
// taken: a slow reader never slows the run and never sees stale state.
func (e *engine) publish() {
	b := e.snapshot()
	e.r.last.Store(b)
	for {
		select {
		case e.r.out <- b:
			e.pub.dirty, e.pub.lastPub = false, time.Now()
			return
		default:
		}
		select {
		case <-e.r.out:
		default:
		}
	}
}

// The sending that inference and judging share: a job's callbacks, the
// ledger's start of a request, a backoff's wait.

// job is the fleet's job for an attempt; its callbacks only post events,
// which the loop hands back to the attempt.
func (e *engine) job(a request, req chat.Request, purpose chat.Purpose, pin string) *gpu.Job {
	q := e.r.events
	return &gpu.Job{
		Request: req, Purpose: purpose, Pin: pin, Timeout: e.r.cfg.Run.Timeout, BeforeSend: e.r.beforeSend,
		Dispatched: func(server string, loading bool) {
			q.post(evDispatched{a: a, server: server, loading: loading})
		},
		Done: func(res chat.Result, err error) { q.post(evDone{a: a, res: res, err: err}) },
	}
}

// markStarted records in the ledger that an attempt took a slot.
func (e *engine) markStarted(a *attempt, server string) {
	if a.started || a.row == nil {
		return
	}
	a.started = true
	e.r.led.QueueStart(a.row.ID, server, e.r.now(), e.ack)
}

// waitToRetry starts a's backoff; its end arrives as an event.
func (e *engine) waitToRetry(a request, wait time.Duration) {
	q := e.r.events
	e.retrying[a] = true
	a.base().timer = time.AfterFunc(wait, func() { q.post(evRetry{a: a}) })
}
