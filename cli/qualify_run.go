package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/judge"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
)

// qualification sends every judge every case of a judge battery, k times,
// through the fleet, records each request in the ledger as a judge request
// of the qualify run, and hands back what the judges said. One goroutine
// (run's caller) owns the ledger rows: the fleet's callbacks only post
// events.
type qualification struct {
	cfg    *config.Config
	tests  []config.JudgeTest
	judges []config.Judge
	fleet  *gpu.Fleet
	led    *ledger.Ledger
	runID  string
	// backoff is the wait before a transient failure is sent again.
	backoff func(attempt int) time.Duration
	// watch, when set, is told of every answer as it settles, on run's
	// goroutine, and ticked while run waits: the live grid and the
	// headless progress lines follow the qualification through it.
	watch *qualifyWatch
}

// qualifyJob is one sample of one judge on one case, across its attempts.
type qualifyJob struct {
	judge   config.Judge
	test    int
	sample  int
	attempt int
	req     chat.Request
	row     *ledger.Request // the current attempt's
	started bool            // the current attempt took a slot
}

// qualifyEvent is what happened to a job: the fleet dispatched it (server),
// or it ended (done), or its backoff after a transient failure is over
// (retry).
type qualifyEvent struct {
	job    *qualifyJob
	server string
	done   bool
	retry  bool
	res    chat.Result
	err    error
}

// qualifyJobs is every request of a qualification: every judge on every
// case, k samples each, rendered and ready to send.
func qualifyJobs(cfg *config.Config, tests []config.JudgeTest, judges []config.Judge) []*qualifyJob {
	k := max(cfg.Scoring.Samples, 1)
	temp := 0.0
	if k > 1 {
		temp = 0.7 // votes at temperature 0 would all be one answer
	}
	var jobs []*qualifyJob
	for _, j := range judges {
		tpl, ok := judge.LookupTemplate(j.Template)
		if !ok {
			tpl, _ = judge.LookupTemplate(scoring.DefaultTemplate)
		}
		for ti, jt := range tests {
			system, prompt := jt.PromptText()
			in := judge.Input{System: system, Prompt: prompt, Tools: jt.Tools, Reply: jt.Candidate,
				ToolCalls: jt.CandidateToolCalls, Criteria: jt.Criteria, Reference: jt.Reference}
			msgs := judge.Render(tpl, in)
			for s := range k {
				seed := cfg.Run.Seed + s
				req := chat.Request{Model: j.Model, Messages: msgs, Temperature: &temp, Seed: &seed, MaxTokens: j.MaxTokens}
				jobs = append(jobs, &qualifyJob{judge: j, test: ti, sample: s, req: req})
			}
		}
	}
	return jobs
}

// run sends every job and waits for every answer, also when ctx is
// cancelled (the fleet then ends what is left as cancelled). It returns
// the answers in job order, without the requests a cancel ended, and the
// first ledger error, which cancels the rest: nothing is sent that the
// ledger does not know of.
func (q *qualification) run(ctx context.Context, jobs []*qualifyJob) ([]judge.QualifyCall, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Room for every event a job can have outstanding (two dispatches, an
	// end, a retry): the fleet may end jobs inside SubmitAll, on this
	// goroutine, and a full channel would block it for good.
	events := make(chan qualifyEvent, 4*len(jobs))
	calls := make([]judge.QualifyCall, len(jobs))
	index := make(map[*qualifyJob]int, len(jobs))
	for i, qj := range jobs {
		index[qj] = i
	}
	var ledgerErr error
	fail := func(err error) {
		if ledgerErr == nil {
			ledgerErr = err
			cancel()
		}
	}
	pending := len(jobs)
	answered := make([]bool, len(jobs))
	settle := func(qj *qualifyJob, call judge.QualifyCall, err error) {
		calls[index[qj]] = call
		// A request cancelled by a stop says nothing of the judge: it is
		// left out, not counted a J-ERR.
		answered[index[qj]] = !(chat.ClassOf(err) == chat.ClassCanceled && ctx.Err() != nil)
		pending--
		if q.watch != nil {
			q.watch.answer(call, answered[index[qj]])
		}
	}
	submit := func(batch []*qualifyJob) {
		out := make([]*gpu.Job, 0, len(batch))
		for _, qj := range batch {
			qj.attempt++
			qj.started = false
			if err := q.insert(qj); err != nil {
				fail(err)
				settle(qj, q.call(qj, chat.Result{}, fmt.Errorf("not sent: %w", err)), nil)
				continue
			}
			out = append(out, q.fleetJob(qj, events))
		}
		q.fleet.SubmitAll(ctx, out)
	}
	submit(jobs)

	beat := time.NewTicker(ledger.HeartbeatEvery)
	defer beat.Stop()
	var ticks <-chan time.Time
	if q.watch != nil {
		t := time.NewTicker(qualifyTickEvery)
		defer t.Stop()
		ticks = t.C
	}
	for pending > 0 {
		select {
		case now := <-ticks:
			q.watch.tick(now)
		case <-beat.C:
			if err := q.led.Heartbeat(q.runID, time.Now()); err != nil {
				fail(err)
			}
		case ev := <-events:
			qj := ev.job
			switch {
			case ev.retry:
				submit([]*qualifyJob{qj})
			case !ev.done:
				if !qj.started {
					qj.started = true
					if err := q.led.StartRequest(qj.row.ID, ev.server, time.Now()); err != nil {
						fail(err)
					}
				}
			default:
				call := q.call(qj, ev.res, ev.err)
				q.record(qj, ev.res, ev.err, call, fail)
				if q.retryable(qj, ev.err) && ctx.Err() == nil {
					time.AfterFunc(q.backoff(qj.attempt), func() { events <- qualifyEvent{job: qj, retry: true} })
					continue
				}
				settle(qj, call, ev.err)
			}
		}
	}
	kept := calls[:0]
	for i, c := range calls {
		if answered[i] {
			kept = append(kept, c)
		}
	}
	return kept, ledgerErr
}

// retryable says whether an attempt that ended with err is sent again:
// transient failures, [run] retries times, as a run retries them; a job
// that waited max_wait for a server is not.
func (q *qualification) retryable(qj *qualifyJob, err error) bool {
	return err != nil && chat.ClassOf(err).Transient() && !errors.Is(err, gpu.ErrGaveUp) && qj.attempt <= q.cfg.Run.Retries
}

// call is what one attempt's answer (or failure) counts as.
func (q *qualification) call(qj *qualifyJob, res chat.Result, err error) judge.QualifyCall {
	c := judge.QualifyCall{Judge: qj.judge.Name, Case: q.tests[qj.test].ID, Sample: qj.sample,
		PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, Latency: res.Latency}
	if err != nil {
		c.Err = chat.MessageOf(err)
		if c.Err == "" {
			c.Err = err.Error()
		}
		return c
	}
	c.Parsed = judge.ParseReply(res.Content, res.FinishReason, qj.judge.MaxTokens)
	return c
}

// insert writes a job's attempt to the ledger before it is sent.
func (q *qualification) insert(qj *qualifyJob) error {
	input, err := json.Marshal(qj.req.Messages)
	if err != nil {
		return err
	}
	params, _ := json.Marshal(map[string]any{"temperature": qj.req.Temperature, "seed": qj.req.Seed, "max_tokens": qj.req.MaxTokens})
	qj.row = &ledger.Request{RunID: q.runID, Purpose: ledger.PurposeJudge, Model: qj.judge.Model,
		Test: q.tests[qj.test].ID, Judge: qj.judge.Name, Sample: qj.sample, Attempt: qj.attempt,
		Input: string(input), Params: string(params), Status: ledger.StatusQueued, QueuedAt: time.Now()}
	_, err = q.led.InsertRequest(qj.row)
	return err
}

// record writes an attempt's end, with the verdict parsed from it.
func (q *qualification) record(qj *qualifyJob, res chat.Result, err error, call judge.QualifyCall, fail func(error)) {
	qj.row.End(time.Now(), res, err)
	if err == nil {
		qj.row.Verdict = string(scoring.Fail)
		switch {
		case call.Parsed.ParseErr != "":
			qj.row.Verdict = string(scoring.Error)
		case call.Parsed.Pass:
			qj.row.Verdict = string(scoring.Pass)
		}
	}
	if err := q.led.FinishRequest(qj.row); err != nil {
		fail(err)
	}
}

// fleetJob is the fleet's job for one attempt: its callbacks post events.
func (q *qualification) fleetJob(qj *qualifyJob, events chan<- qualifyEvent) *gpu.Job {
	return &gpu.Job{Request: qj.req, Purpose: chat.PurposeJudge, Pin: qj.judge.FleetServer(), Timeout: q.cfg.Run.Timeout,
		Dispatched: func(server string, loading bool) { events <- qualifyEvent{job: qj, server: server} },
		Done:       func(res chat.Result, err error) { events <- qualifyEvent{job: qj, done: true, res: res, err: err} },
	}
}

// startQualifyRun records the qualify run in the ledger: no models, the
// judge battery's cases as its tests, scoring mode "qualify".
func startQualifyRun(led *ledger.Ledger, id string, cfg *config.Config, tests []config.JudgeTest, started time.Time) error {
	ids := make([]string, len(tests))
	for i, t := range tests {
		ids[i] = t.ID
	}
	scoringJSON, err := json.Marshal(cfg.Scoring.Redacted())
	if err != nil {
		return err
	}
	err = led.CreateRun(ledger.RunRow{ID: id, Name: cfg.Name, Status: ledger.RunRunning, ScoringMode: qualifyMode,
		ConfigJSON: cfg.RedactedJSON(), ScoringJSON: string(scoringJSON), Tests: ids, Repeat: max(cfg.Scoring.Samples, 1),
		StartedAt: started, Owner: led.Self(), Heartbeat: started})
	if err != nil {
		return fmt.Errorf("recording the qualify run: %w", err)
	}
	return nil
}

// qualifyMode is the scoring mode the ledger keeps for a qualify run, so
// that `pitwall runs` can tell one from a battery run.
const qualifyMode = "qualify"
