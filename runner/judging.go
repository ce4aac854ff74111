package runner

import (
	"context"
	"fmt"
	"sort"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/judge"
	"pitwall/runner/ledger"
)

// judgeJob is one judge sample of one cell.
type judgeJob struct {
	ti, mi, rep int
	judge       string
	sample      int
	round       int
	refresh     bool // skip the cache (a re-judge)
}

// tally collects the k samples of one judge on one cell in one round.
type tally struct {
	round   int
	samples []judge.Sample
	got     int
	errs    []string
	started time.Time
	latency time.Duration // the slowest sample's request: judge time, not queueing
	// prev and prevJury are the verdicts a re-judge replaces: they stay
	// until the new ones are in, and come back if the re-judge is cancelled.
	prev, prevJury *Judgment
}

type tallyKey struct {
	ti, mi, rep int
	judge       string
}

func countJobs(j []judgeJob) int { return len(j) }

// JudgeServer is the fleet server a judge's requests are pinned to: its
// configured server, or the hosted endpoint main adds for a judge with a
// url; "" for server = "any" (every server that offers the model).
func JudgeServer(j config.Judge) string {
	switch j.Server {
	case config.AnyServer:
		return ""
	case "":
		return "judge:" + j.Name
	}
	return j.Server
}

func (r *Run) samples() int {
	if r.cfg.Scoring.Samples < 1 {
		return 1
	}
	return r.cfg.Scoring.Samples
}

// wantedList is the judges being run, sorted. Callers hold r.mu.
func (r *Run) wantedList() []string {
	out := make([]string, 0, len(r.wanted))
	for n := range r.wanted {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// planJudging marks a completed cell as queued for the given judges and
// returns the jobs to submit. Callers hold r.mu.
func (r *Run) planJudging(ti, mi, rep int, judges []string) []judgeJob {
	return r.plan(ti, mi, rep, judges, false)
}

func (r *Run) plan(ti, mi, rep int, judges []string, refresh bool) []judgeJob {
	c := r.table.at(ti, mi, rep)
	if c.Status != Completed {
		return nil
	}
	if r.tallies == nil {
		r.tallies = map[tallyKey]*tally{}
	}
	ref := CellRef{Test: c.Test, Model: c.Model, Repeat: rep}
	round := r.round[ref]
	var jobs []judgeJob
	k := r.samples()
	for _, name := range judges {
		if !refresh {
			if j := c.Judgment(name); j != nil {
				continue // judged or being judged
			}
		}
		prev := c.Judgment(name)
		if prev != nil && prev.Status != JudgmentDone {
			prev = nil
		}
		if old := r.tallies[tallyKey{ti, mi, rep, name}]; old != nil && prev == nil {
			prev = old.prev // a re-judge of a re-judge still owes the first verdict back
		}
		c = r.table.edit(ti, mi, rep)
		setJudgment(c, &Judgment{Judge: name, Status: JudgmentQueued})
		r.tallies[tallyKey{ti, mi, rep, name}] = &tally{round: round, samples: make([]judge.Sample, k), started: r.now(),
			prev: prev, prevJury: r.pendingJury[tallyKey{ti, mi, rep, JuryName}]}
		for s := 0; s < k; s++ {
			jobs = append(jobs, judgeJob{ti: ti, mi: mi, rep: rep, judge: name, sample: s, round: round, refresh: refresh})
		}
	}
	if len(jobs) > 0 {
		r.verdictsDirty = true
	}
	return jobs
}

// planAllJudging plans the judges for every completed cell. Callers hold r.mu.
func (r *Run) planAllJudging(judges []string) []judgeJob {
	var jobs []judgeJob
	for ti := range r.tests {
		for mi := range r.models {
			for rep := 0; rep < r.table.repeat; rep++ {
				jobs = append(jobs, r.plan(ti, mi, rep, judges, false)...)
			}
		}
	}
	return jobs
}

// judgingRefused says why no judge work can be taken now. Callers hold r.mu.
func (r *Run) judgingRefused() error {
	switch {
	case r.closing:
		return fmt.Errorf("the run is closing")
	case r.stopping && !r.finished:
		return fmt.Errorf("the run is stopping: re-judge once it has stopped")
	}
	return nil
}

// judgeCtx is the context judge work runs under: the run's while its phases
// run (Stop cancels it), afterwards one that only Close cancels.
func (r *Run) judgeCtx() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.finished {
		return r.ctx
	}
	if r.closing {
		return r.jctx // cancelled by Close
	}
	if r.jctx.Err() != nil && !r.isClosed() {
		r.jctx, r.jstop = context.WithCancel(context.Background())
	}
	return r.jctx
}

func (r *Run) isClosed() bool {
	select {
	case <-r.closed:
		return true
	default:
		return false
	}
}

// submitJudging sends judge jobs (r.jinflight already counts them).
func (r *Run) submitJudging(jobs []judgeJob) {
	if len(jobs) == 0 {
		return
	}
	ctx := r.judgeCtx()
	for _, j := range jobs {
		r.submitJudge(ctx, j, 1)
	}
}

func (r *Run) submitJudge(ctx context.Context, j judgeJob, attempt int) {
	jc := r.judges[j.judge]
	t := r.tests[j.ti]
	r.mu.Lock()
	c := *r.table.at(j.ti, j.mi, j.rep)
	r.mu.Unlock()
	tpl, ok := judge.LookupTemplate(jc.Template)
	if !ok {
		tpl, _ = judge.LookupTemplate("rubric-v1")
	}
	system, prompt := promptText(t)
	in := judge.Input{System: system, Prompt: prompt, Tools: t.Tools,
		Candidate: judge.RenderCandidate(c.Output, c.ToolCalls), Criteria: t.Criteria, Reference: t.Reference}
	temp := 0.0
	if r.samples() > 1 {
		// Votes at temperature 0 would all be the same answer.
		temp = 0.7
	}
	seed := r.cfg.Run.Seed + j.sample + 1000*j.round
	maxTokens := jc.MaxTokens
	req := gpu.Request{Model: jc.Model, Messages: judge.Render(tpl, in), Temperature: &temp, Seed: &seed, MaxTokens: maxTokens}
	key := judge.CacheKey(judge.KeyInput{BaseURL: r.judgeEndpoint(jc), Model: jc.Model, TemplateID: tpl.ID,
		TemplateVersion: tpl.Version, TemplateHash: tpl.Hash(), Temperature: temp, MaxTokens: maxTokens,
		Seed: seed, Sample: j.sample, Input: in})
	row := &ledger.Request{RunID: r.id, Purpose: ledger.PurposeJudge, Model: jc.Model, Test: t.ID, Repeat: j.rep,
		Judge: j.judge, Sample: j.sample, Attempt: attempt, Input: mustJSON(req.Messages), Params: requestParams(req),
		CacheKey: key, Status: ledger.StatusQueued, QueuedAt: r.now()}

	if !j.refresh && !r.opts.RefreshJudges && attempt == 1 {
		if out, ok, err := r.led.CachedJudgeOutput(key); err == nil && ok {
			// A verdict already paid for: recorded, not sent again.
			row.Server, row.Status, row.Output = "(cache)", ledger.StatusCompleted, out
			row.StartedAt, row.EndedAt = row.QueuedAt, row.QueuedAt
			if _, err := r.led.InsertRequest(row); err != nil {
				r.log.Error("ledger: cached judge", "err", err)
			}
			r.settleJudge(j, row, gpu.Result{Content: out}, nil, "cache")
			return
		}
	}
	if _, err := r.led.InsertRequest(row); err != nil {
		r.mu.Lock()
		r.fail(fmt.Sprintf("the ledger %s cannot be written (%v): nothing more is sent", r.led.Path(), err))
		r.mu.Unlock()
		r.settleJudge(j, row, gpu.Result{}, &gpu.Error{Class: "ledger", Message: err.Error()}, "live")
		return
	}
	r.fleet.Submit(ctx, &gpu.Job{
		Request: req, Purpose: gpu.PurposeJudge, Pin: JudgeServer(jc), Timeout: r.cfg.Run.Timeout,
		Dispatched: func(server string) {
			if err := r.led.StartRequest(row.ID, server, r.now()); err != nil {
				r.log.Error("ledger: start judge request", "err", err)
			}
			r.mu.Lock()
			if tl := r.tallies[tallyKey{j.ti, j.mi, j.rep, j.judge}]; tl != nil && tl.round == j.round {
				c := r.table.edit(j.ti, j.mi, j.rep)
				if cur := c.Judgment(j.judge); cur != nil && cur.Status == JudgmentQueued {
					nj := *cur
					nj.Status = JudgmentRunning
					setJudgment(c, &nj)
				}
			}
			r.mu.Unlock()
			r.changed()
		},
		Done: func(res gpu.Result, err error) {
			class := gpu.ClassOf(err)
			if err != nil && judgeMayRetry(class, attempt, r.cfg.Run.Retries) && ctx.Err() == nil {
				row.Status, row.ErrorClass, row.Error, row.EndedAt = ledger.StatusError, string(class), errMessage(err), r.now()
				if lerr := r.led.FinishRequest(row); lerr != nil {
					r.log.Error("ledger: finish judge request", "err", lerr)
				}
				r.retryAfterCtx(ctx, r.opts.Backoff(attempt), func() { r.submitJudge(ctx, j, attempt+1) }, func() {
					r.settleJudge(j, &ledger.Request{}, gpu.Result{}, &gpu.Error{Class: gpu.ClassCanceled, Message: "stopped before retry"}, "live")
				})
				return
			}
			r.settleJudge(j, row, res, err, "live")
		},
	})
}

// retryAfterCtx is retryAfter under another context than the run's phases.
func (r *Run) retryAfterCtx(ctx context.Context, wait time.Duration, again, cancelled func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
			if ctx.Err() != nil {
				cancelled()
				return
			}
			again()
		case <-ctx.Done():
			cancelled()
		}
	}()
}

// settleJudge takes one finished judge sample.
func (r *Run) settleJudge(j judgeJob, row *ledger.Request, res gpu.Result, err error, source string) {
	var sample judge.Sample
	if err == nil {
		sample = judge.Parse(res.Content)
		if res.Reasoning != "" && sample.Reasoning == "" {
			sample.Reasoning = res.Reasoning
		}
	}
	if row.ID != 0 && source == "live" {
		row.EndedAt = r.now()
		row.Server = firstNonEmpty(res.Server, row.Server, serverOf(err))
		if err != nil {
			row.Status, row.ErrorClass, row.Error = ledger.StatusError, string(gpu.ClassOf(err)), errMessage(err)
			if gpu.ClassOf(err) == gpu.ClassCanceled {
				row.Status = ledger.StatusCanceled
			}
		} else {
			row.Status = ledger.StatusCompleted
			fillResult(row, res)
			row.Verdict = sampleVerdict(sample)
		}
		if lerr := r.led.FinishRequest(row); lerr != nil {
			r.log.Error("ledger: finish judge request", "err", lerr)
		}
	}

	var verdicts []ledger.VerdictRow
	r.mu.Lock()
	key := tallyKey{j.ti, j.mi, j.rep, j.judge}
	tl := r.tallies[key]
	if tl != nil && tl.round == j.round && gpu.ClassOf(err) == gpu.ClassCanceled {
		// A stopped judgment is not a verdict: the cell gets back the one
		// it had, or none.
		delete(r.tallies, key)
		c := r.table.edit(j.ti, j.mi, j.rep)
		if tl.prev != nil {
			setJudgment(c, tl.prev)
		} else {
			dropJudgments(c, j.judge)
		}
		if tl.prevJury != nil && c.Judgment(JuryName) == nil {
			setJudgment(c, tl.prevJury)
		}
		r.verdictsDirty = true
	} else if tl != nil && tl.round == j.round {
		if err != nil {
			tl.errs = append(tl.errs, fmt.Sprintf("sample %d: %s", j.sample+1, errMessage(err)))
			sample = judge.Sample{ParseErr: "judge request failed: " + errMessage(err)}
		}
		tl.samples[j.sample] = sample
		tl.latency = max(tl.latency, res.Latency)
		tl.got++
		if tl.got == len(tl.samples) {
			delete(r.tallies, key)
			verdicts = r.concludeJudge(j, tl, source)
		}
	}
	r.mu.Unlock()

	// Verdicts are on disk before the run can be seen to end.
	for _, v := range verdicts {
		if perr := r.led.PutVerdict(v); perr != nil {
			r.log.Error("ledger: put verdict", "err", perr)
		}
	}

	r.mu.Lock()
	r.jinflight--
	if r.jinflight == 0 && r.inflight == 0 {
		r.finishIfDone()
	}
	r.mu.Unlock()
	r.changed()
}

func sampleVerdict(s judge.Sample) string {
	switch {
	case s.ParseErr != "":
		return string(judge.Error)
	case s.Pass:
		return string(judge.Pass)
	default:
		return string(judge.Fail)
	}
}

// concludeJudge votes one judge's samples on a cell, and the jury when every
// judge has spoken. Callers hold r.mu.
func (r *Run) concludeJudge(j judgeJob, tl *tally, source string) []ledger.VerdictRow {
	jc := r.judges[j.judge]
	weight := jc.Weight
	if weight <= 0 {
		weight = 1
	}
	res := judge.Vote(j.judge, weight, tl.samples, r.cfg.Scoring.MinScore)
	jd := &Judgment{Judge: j.judge, Status: JudgmentDone, Verdict: res.Verdict, Score: res.Score,
		Agreement: res.Agreement, Samples: res.Samples, Latency: tl.latency, Source: source}
	if res.Verdict == judge.Error {
		jd.Error = firstNonEmpty(joinErrs(tl.errs), firstParseErr(tl.samples), "the judge gave no verdict")
	}
	c := r.table.edit(j.ti, j.mi, j.rep)
	setJudgment(c, jd)
	r.verdictsDirty = true
	out := []ledger.VerdictRow{r.verdictRow(c, jd, mustJSON(res))}

	if len(r.cfg.Scoring.Judges) >= 2 {
		var all []judge.JudgeResult
		for _, cj := range r.cfg.Scoring.Judges {
			g := c.Judgment(cj.Name)
			if g == nil || g.Status != JudgmentDone {
				return out
			}
			w := cj.Weight
			if w <= 0 {
				w = 1
			}
			all = append(all, judge.JudgeResult{Judge: cj.Name, Weight: w, Samples: g.Samples, Score: g.Score, Agreement: g.Agreement, Verdict: g.Verdict})
		}
		jury := judge.Aggregate(all, r.cfg.Scoring.Aggregation, r.cfg.Scoring.DisagreementMax)
		verdict := jury.Verdict
		if !r.cfg.Scoring.ReportDisagreement && jury.Decision != "" {
			verdict = jury.Decision // disagreement is reported only when asked for
		}
		jj := &Judgment{Judge: JuryName, Status: JudgmentDone, Verdict: verdict, Score: jury.Score, Jury: &jury, Source: source}
		setJudgment(c, jj)
		out = append(out, r.verdictRow(c, jj, mustJSON(jury)))
	}
	return out
}

func joinErrs(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	s := errs[0]
	if len(errs) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return s
}

func firstParseErr(samples []judge.Sample) string {
	for _, s := range samples {
		if s.ParseErr != "" {
			return s.ParseErr
		}
	}
	return ""
}

func (r *Run) verdictRow(c *Cell, j *Judgment, detail string) ledger.VerdictRow {
	return ledger.VerdictRow{RunID: r.id, Model: c.Model, Test: c.Test, Repeat: c.Repeat, Judge: j.Judge,
		Verdict: string(j.Verdict), Score: j.Score, Agreement: j.Agreement, Detail: detail, Error: j.Error,
		Source: j.Source, LatencyMS: j.Latency.Milliseconds(), At: r.now()}
}

// judgesFor expands a judge name ("" = the one in view, JuryName = all).
// Callers hold r.mu.
func (r *Run) judgesFor(name string) ([]string, error) {
	if name == "" {
		name = r.active
	}
	if name == "" {
		return nil, fmt.Errorf("no judge is configured (scoring mode is deterministic)")
	}
	if name == JuryName {
		if len(r.cfg.Scoring.Judges) < 2 {
			return nil, fmt.Errorf("a jury needs two or more judges")
		}
		var all []string
		for _, j := range r.cfg.Scoring.Judges {
			all = append(all, j.Name)
		}
		return all, nil
	}
	if _, ok := r.judges[name]; !ok {
		return nil, fmt.Errorf("no judge named %q", name)
	}
	return []string{name}, nil
}

// SwitchJudge puts another judge (or the jury) in view and judges what it
// has not judged yet; verdicts of other judges are kept.
func (r *Run) SwitchJudge(name string) error {
	r.mu.Lock()
	if err := r.judgingRefused(); err != nil {
		r.mu.Unlock()
		return err
	}
	names, err := r.judgesFor(name)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	r.active = name
	var jobs []judgeJob
	for _, n := range names {
		r.wanted[n] = true
	}
	if r.judgeStarts && !r.stopping || r.finished {
		jobs = r.planAllJudging(names)
		if len(jobs) > 0 && !r.finished {
			r.phase = PhaseJudgment
		}
	}
	r.jinflight += len(jobs)
	r.verdictsDirty = true
	r.mu.Unlock()
	r.submitJudging(jobs)
	r.changed()
	return nil
}

// Rejudge judges the given cells again with a judge ("" = the one in view),
// with fresh samples; inference is never repeated.
func (r *Run) Rejudge(cells []CellRef, name string) error {
	r.mu.Lock()
	if err := r.judgingRefused(); err != nil {
		r.mu.Unlock()
		return err
	}
	names, err := r.judgesFor(name)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	if r.pendingJury == nil {
		r.pendingJury = map[tallyKey]*Judgment{}
	}
	var jobs []judgeJob
	for _, ref := range cells {
		ti, ok1 := r.tindex[ref.Test]
		mi, ok2 := r.mindex[ref.Model]
		if !ok1 || !ok2 || ref.Repeat < 0 || ref.Repeat >= r.table.repeat {
			continue
		}
		if r.table.at(ti, mi, ref.Repeat).Status != Completed {
			continue
		}
		r.round[ref]++
		c := r.table.edit(ti, mi, ref.Repeat)
		jk := tallyKey{ti, mi, ref.Repeat, JuryName}
		if jj := c.Judgment(JuryName); jj != nil {
			r.pendingJury[jk] = jj
		}
		dropJudgments(c, JuryName) // the aggregate is redone when the judges are
		jobs = append(jobs, r.plan(ti, mi, ref.Repeat, names, true)...)
		delete(r.pendingJury, jk)
	}
	r.jinflight += len(jobs)
	r.mu.Unlock()
	r.submitJudging(jobs)
	r.changed()
	return nil
}

// RejudgeAll re-judges every completed cell.
func (r *Run) RejudgeAll(name string) error {
	var refs []CellRef
	r.mu.Lock()
	for ti, t := range r.tests {
		for mi, m := range r.models {
			for rep := 0; rep < r.table.repeat; rep++ {
				if r.table.at(ti, mi, rep).Status == Completed {
					refs = append(refs, CellRef{Test: t.ID, Model: m, Repeat: rep})
				}
			}
		}
	}
	r.mu.Unlock()
	return r.Rejudge(refs, name)
}

// judgeEndpoint names where a judge's verdicts come from, for the cache key:
// the provider's URL, a simulated server by name (its port changes with
// every start), or any server that offers the model.
func (r *Run) judgeEndpoint(j config.Judge) string {
	switch {
	case j.URL != "":
		return j.URL
	case j.Server == config.AnyServer:
		return "any-server"
	}
	for _, s := range r.cfg.Servers {
		if s.Name == j.Server {
			if s.Kind == config.KindSim {
				return "sim:" + s.Name
			}
			return s.URL
		}
	}
	return j.Server
}

// judgeMayRetry is mayRetry for judge samples, which count no failovers of
// their own: a lost server gives them the failover attempts on top.
func judgeMayRetry(class gpu.ErrorClass, attempt, retries int) bool {
	if class == gpu.ClassUnavailable {
		return attempt <= retries+failoverAttempts
	}
	return attempt <= retryBudget(class, retries)
}
