package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/internal/redact"
	"pitwall/judge"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// judgeJob is one judge sample of one cell.
type judgeJob struct {
	cell    cellPos
	judge   string
	sample  int
	round   int
	refresh bool // skip the cache (a re-judge)
}

func (j *judgingPart) samples() int { return max(j.e.r.cfg.Scoring.Samples, 1) }

// wantedList is the judges being run, sorted.
func (j *judgingPart) wantedList() []string {
	out := make([]string, 0, len(j.e.wanted))
	for n := range j.e.wanted {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// phaseTwo queues the judging of every completed cell not judged yet, and
// says how many judge samples that is.
func (j *judgingPart) phaseTwo() int {
	if len(j.e.wanted) == 0 || j.e.totals.completed == 0 {
		return 0
	}
	return j.queueAll(j.wantedList())
}

// planCell marks a completed cell as queued for the given judges and
// returns the jobs to submit. Without refresh, judges that have judged the
// cell (or are judging it) are skipped.
func (j *judgingPart) planCell(p cellPos, judges []string, refresh bool) []judgeJob {
	c := j.e.table.at(p)
	if c.Status != state.Completed {
		return nil
	}
	round := j.round[p]
	var jobs []judgeJob
	k := j.samples()
	for _, name := range judges {
		if !refresh && c.Judgment(name) != nil {
			continue // judged or being judged
		}
		prev := c.Judgment(name)
		if prev != nil && prev.Status != state.JudgmentDone {
			prev = nil
		}
		key := tallyKey{p, name}
		if old := j.tallies[key]; old != nil && prev == nil {
			prev = old.prev // a re-judge of a re-judge still owes the first verdict back
		}
		c = j.e.table.edit(p)
		state.SetJudgment(c, &state.Judgment{Judge: name, Status: state.JudgmentQueued})
		j.tallies[key] = &tally{round: round, samples: make([]scoring.Sample, k),
			prev: prev, prevJury: j.pendingJury[tallyKey{p, scoring.JuryName}]}
		for s := range k {
			jobs = append(jobs, judgeJob{cell: p, judge: name, sample: s, round: round, refresh: refresh})
		}
	}
	if len(jobs) > 0 {
		j.e.pub.dirty = true
	}
	return jobs
}

// judgingRefused says why no judge work can be taken now.
func (j *judgingPart) judgingRefused() error {
	switch j.e.life {
	case idle:
		return fmt.Errorf("the run has not started")
	case closing, closed:
		return fmt.Errorf("the run is closing")
	case stopping:
		return fmt.Errorf("the run is stopping: re-judge once it has stopped")
	}
	return nil
}

// judgeContext is what judge work runs under: the phases' context while
// they run (Stop cancels it), afterwards one that Stop and Close cancel.
func (j *judgingPart) judgeContext() context.Context {
	if j.e.life != ended {
		return j.e.phases.phaseCtx
	}
	if j.e.phases.judgeCtx == nil || j.e.phases.judgeCtx.Err() != nil {
		j.e.phases.judgeCtx, j.e.phases.judgeCancel = context.WithCancel(context.Background())
	}
	return j.e.phases.judgeCtx
}

// submitJudging sends judge jobs: each is a cached verdict taken from the
// ledger, or a request written to the ledger and handed to the fleet.
func (j *judgingPart) submitJudging(jobs []judgeJob) {
	if len(jobs) == 0 {
		return
	}
	ctx := j.judgeContext()
	j.jinflight += len(jobs)
	j.e.pub.dirty = true
	// Read in one query; should it fail, each job reads its own and
	// settles as not sent when that fails too.
	whole, _ := j.e.wholeReplies(jobs)
	prepared := make([]*readyJudge, 0, len(jobs))
	for i := range jobs {
		a := newJudgeAttempt(j, &jobs[i], 1, 0, ctx)
		if rj := j.prepareJudge(a, whole); rj != nil {
			prepared = append(prepared, rj)
		}
	}
	// The judge cache too; should that fail, each job looks up its own.
	cached := j.cachedJudges(prepared)
	var fleetJobs []*readyJudge
	for _, rj := range prepared {
		if fj := j.routeJudge(rj, cached); fj != nil {
			fleetJobs = append(fleetJobs, fj)
		}
	}
	j.sendJudging(ctx, j.e.batches.batchJudging(ctx, j.written(fleetJobs))) // batch judges: batch.go
}

// lookedUp says a judge request looks in the judge cache before it is
// sent: all but a re-judge's, which asks for a fresh answer.
func (j *judgingPart) lookedUp(a *judgeAttempt) bool {
	return !a.judge.refresh && !j.e.r.opts.RefreshJudges
}

// cachedJudges reads the judge cache for the requests that look in it, in
// one query for all: the outputs of the keys that hit, or nil (each
// request then looks up its own key) when the read fails.
func (j *judgingPart) cachedJudges(rjs []*readyJudge) map[string]string {
	var keys []string
	for _, rj := range rjs {
		if j.lookedUp(rj.a) {
			keys = append(keys, rj.a.key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	hits, err := j.e.r.led.CachedJudgeOutputs(keys)
	if err != nil {
		return nil
	}
	return hits
}

// judgeRequest makes a judge attempt's ledger row and fleet job (for
// written to record), or settles it at once from the cache or by sharing
// an identical request in flight (nil). whole holds the replies read from
// the ledger (wholeReplies).
func (j *judgingPart) judgeRequest(a *judgeAttempt, whole map[cellPos]wholeReply) *readyJudge {
	rj := j.prepareJudge(a, whole)
	if rj == nil {
		return nil
	}
	return j.routeJudge(rj, nil)
}

// prepareJudge makes a judge attempt's request, cache key and ledger row,
// or settles it as not sent (nil) when its reply cannot be read.
func (jg *judgingPart) prepareJudge(a *judgeAttempt, whole map[cellPos]wholeReply) *readyJudge {
	r := jg.e.r
	j := a.judge
	jc := r.judges[j.judge]
	t := r.tests[j.cell.test]
	c := jg.e.table.at(j.cell)
	tpl, ok := judge.LookupTemplate(jc.Template)
	if !ok {
		tpl, _ = judge.LookupTemplate(scoring.DefaultTemplate)
	}
	reply, err := jg.e.replyOf(j.cell, whole)
	if err != nil {
		jg.e.fail(err)
		jg.judgeSettledAs(a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "not sent: the reply cannot be read from the ledger"}, "live")
		return nil
	}
	system, prompt := t.PromptText()
	in := judge.Input{System: system, Prompt: prompt, Tools: t.Tools,
		Reply: reply.output, ToolCalls: reply.calls, Criteria: t.Criteria, Reference: t.Reference}.WithCandidate()
	temp := 0.0
	if jg.samples() > 1 {
		// Votes at temperature 0 would all be the same answer.
		temp = 0.7
	}
	// A re-judge draws fresh samples (another seed), but its verdict is
	// kept under the same key as the first: the newest answer of a judge
	// configuration is the one later runs reuse.
	baseSeed := r.cfg.Run.Seed + j.sample
	seed := baseSeed + 1000*j.round
	steps := judgeSteps(c)
	req := chat.Request{Model: jc.Model, Messages: judgeMessages(tpl, in, steps), Temperature: &temp, Seed: &seed, MaxTokens: jc.MaxTokens}
	key := judgeCacheKey(judge.KeyInput{BaseURL: jg.judgeEndpoint(jc), Model: jc.Model, TemplateID: tpl.ID,
		TemplateVersion: tpl.Version, TemplateHash: tpl.Hash(), Temperature: temp, MaxTokens: jc.MaxTokens,
		Seed: baseSeed, Sample: j.sample, Input: in}, steps)
	a.row = &ledger.Request{RunID: r.id, Purpose: ledger.PurposeJudge, Model: jc.Model, Test: t.ID, Repeat: int(j.cell.rep),
		CandidateModel: r.models[j.cell.model], Round: j.round,
		Judge: j.judge, Sample: j.sample, Attempt: a.n, Input: chat.MessagesJSON(req.Messages), Params: requestParams(req),
		CacheKey: key, Status: ledger.StatusQueued, QueuedAt: r.now()}

	a.key, a.candidate = key, reply.output
	return &readyJudge{a: a, req: req, pin: jc.FleetServer()}
}

// routeJudge settles a prepared judge request at once by sharing an
// identical request in flight or from the judge cache (nil), or returns
// it to be written and sent. cached holds the cache's answers read for it
// (cachedJudges); nil, it looks up its own key.
func (jg *judgingPart) routeJudge(rj *readyJudge, cached map[string]string) *readyJudge {
	r, a := jg.e.r, rj.a
	key := a.key
	// Paid for once: an identical request in flight is shared, not sent
	// again. A re-judge shares only with another fresh request.
	if jg.e.sharing.follow(a) {
		return nil
	}
	// A retry looks in the ledger too: another cell may have paid for the
	// same answer meanwhile.
	if jg.lookedUp(a) {
		out, hit, err := "", false, error(nil)
		if cached != nil {
			out, hit = cached[key]
		} else {
			out, hit, err = r.led.CachedJudgeOutput(key)
		}
		if err == nil && hit {
			// A verdict already paid for: recorded, not sent again.
			a.row.Server, a.row.Status, a.row.Output = ledger.ServerCache, ledger.StatusCompleted, out
			a.row.StartedAt, a.row.EndedAt = a.row.QueuedAt, a.row.QueuedAt
			r.led.QueueInsert(*a.row, jg.e.ack)
			a.row = nil // finished already
			// The cache holds only answers that were read as a verdict, so
			// only ones that ended with finish_reason stop.
			jg.judgeSettledAs(a, chat.Result{Content: out, FinishReason: "stop"}, nil, "cache")
			return nil
		}
	}
	jg.e.sharing.lead(a)
	return rj
}

// readyJudge is a judge request with its ledger row, for written to record
// before it goes to the fleet or a batch.
type readyJudge struct {
	a   *judgeAttempt
	req chat.Request
	pin string
}

// written records ready judge requests in the ledger with one commit,
// before anything sends them, and returns them; when the ledger cannot be
// written, none is sent and each settles as not sent.
func (j *judgingPart) written(ready []*readyJudge) []*readyJudge {
	if len(ready) == 0 {
		return nil
	}
	rows := make([]*ledger.Request, len(ready))
	for i, rj := range ready {
		rows[i] = rj.a.row
	}
	if err := j.e.r.led.InsertRequests(rows); err != nil {
		j.e.fail(err)
		for _, rj := range ready {
			rj.a.row = nil
			j.settled(rj.a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "not sent: the ledger cannot be written"})
		}
		return nil
	}
	for _, rj := range ready {
		rj.a.row.Input, rj.a.row.Params = "", "" // on disk; the row's end writes neither
	}
	return ready
}

func (jg *judgingPart) sendJudging(ctx context.Context, jobs []*readyJudge) {
	if len(jobs) == 0 {
		return
	}
	out := make([]*gpu.Job, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, jg.e.job(j.a, j.req, chat.PurposeJudge, j.pin))
	}
	jg.e.r.fleet.SubmitAll(ctx, out)
}

func (jg *judgingPart) dispatched(a *judgeAttempt, server string) {
	jg.e.markStarted(&a.attempt, server)
	j := a.judge
	tl := jg.tallies[tallyKey{j.cell, j.judge}]
	if tl == nil || tl.round != j.round {
		return
	}
	c := jg.e.table.at(j.cell)
	if cur := c.Judgment(j.judge); cur != nil && cur.Status == state.JudgmentQueued {
		nj := *cur
		nj.Status = state.JudgmentRunning
		state.SetJudgment(jg.e.table.edit(j.cell), &nj)
		jg.e.pub.dirty = true
	}
}

// done takes a finished judge request: a retry, or the sample.
func (j *judgingPart) done(a *judgeAttempt, res chat.Result, err error) {
	if res.PromptCut > 0 {
		j.e.totals.judgeCut++
	}
	class := chat.ClassOf(err)
	// Tries a batch left unanswered are not this request's failures: a
	// request sent live after them has its retries whole.
	if err != nil && !errors.Is(err, gpu.ErrGaveUp) && judgeMayRetry(class, a.n-a.batched, j.e.r.cfg.Run.Retries, j.samples() <= 1) && a.ctx.Err() == nil {
		j.spentJudging(a, res, err)
		a.row.End(j.e.r.now(), res, err)
		j.e.r.led.QueueFinish(a.row, j.e.ack)
		j.e.waitToRetry(a, j.e.r.opts.Backoff(a.n))
		return
	}
	j.settled(a, res, err)
}

func (j *judgingPart) retry(a *judgeAttempt) {
	if a.ctx.Err() != nil {
		j.settled(a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "stopped before retry"})
		return
	}
	// The retry leads whatever waited on the attempt before it.
	fs := j.e.sharing.release(a)
	next := newJudgeAttempt(j, a.judge, a.n+1, a.batched, a.ctx)
	ready := []*readyJudge{j.judgeRequest(next, nil)}
	if ready[0] != nil {
		j.e.sharing.adopt(next, fs)
	} else {
		// Answered from the ledger: so are the followers.
		ready = ready[:0]
		for _, f := range fs {
			if rj := j.judgeRequest(f, nil); rj != nil {
				ready = append(ready, rj)
			}
		}
	}
	j.sendJudging(a.ctx, j.written(slices.DeleteFunc(ready, func(rj *readyJudge) bool { return rj == nil })))
}

func (j *judgingPart) settled(a *judgeAttempt, res chat.Result, err error) {
	j.judgeSettledAs(a, res, err, "live")
	j.e.sharing.settleFollowers(a, res, err)
}

// judgeSettledAs takes one finished judge sample from source (live or
// cache), in steps: the answer is read as a sample, its ledger row ends
// (priced), the sample joins its judge's tally for the cell (a cancelled
// one gives the cell back what it had), and when every sample of the
// judge is in, the judge votes and the verdicts are recorded.
func (jg *judgingPart) judgeSettledAs(a *judgeAttempt, res chat.Result, err error, source string) {
	j := a.judge
	jg.jinflight--
	jg.e.pub.dirty = true
	sample := readSample(a.candidate, res, err, jg.e.r.judges[j.judge].MaxTokens)
	if a.row != nil {
		jg.endRow(a, res, err, sample)
	}
	key := tallyKey{j.cell, j.judge}
	tl := jg.tallies[key]
	if tl == nil || tl.round != j.round {
		return // a later re-judge took the cell over
	}
	if chat.ClassOf(err) == chat.ClassCanceled {
		delete(jg.tallies, key)
		tl.restore(jg.e.table.edit(j.cell), j.judge)
		return
	}
	if !tl.add(j.sample, sample, res, err) {
		return
	}
	delete(jg.tallies, key)
	// Verdicts are on disk before the run can be seen to end.
	for _, v := range jg.conclude(j, tl, source) {
		jg.e.r.led.QueueVerdict(v, jg.e.ack)
	}
}

// endRow ends a judge request's ledger row with its answer, its price and
// the verdict read from it.
func (jg *judgingPart) endRow(a *judgeAttempt, res chat.Result, err error, sample scoring.Sample) {
	jg.spentJudging(a, res, err)
	a.row.End(jg.e.r.now(), res, err)
	if err == nil {
		a.row.Verdict = sampleVerdict(sample)
	}
	jg.e.r.led.QueueFinish(a.row, jg.e.ack)
}

// judgeEndpoint names where a judge's verdicts come from, for the cache key:
// the provider's URL, a simulated server by name (its port changes with
// every start), or any server that offers the model.
func (jg *judgingPart) judgeEndpoint(j config.Judge) string {
	switch {
	case j.URL != "":
		// Masked: the key is stored in the ledger, and a password in it
		// could be brute-forced from the hash.
		return redact.URL(j.URL)
	case j.Server == config.AnyServer:
		return "any-server"
	}
	if s, ok := jg.e.r.cfg.Server(j.Server); ok {
		if s.Kind == chat.KindSim {
			return "sim:" + s.Name
		}
		return s.URL
	}
	return j.Server
}

// judgeMayRetry is mayRetry for judge samples, which count no failovers of
// their own: a lost server gives them the failover attempts on top.
// A judge asked for one sample answers at temperature 0 (deterministic).
func judgeMayRetry(class chat.ErrorClass, attempt, retries int, deterministic bool) bool {
	if class == chat.ClassUnavailable {
		return attempt <= retries+failoverAttempts
	}
	return attempt <= retryBudget(class, retries, deterministic)
}
