package qualify

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

// Qualification sends every judge every case of a judge battery, k times,
// through the fleet, records each request in the ledger as a judge request
// of the qualify run, and hands back what the judges said. One goroutine
// (Run's caller) owns the ledger rows: the fleet's callbacks only post
// events.
type Qualification struct {
	Cfg    *config.Config
	Tests  []config.JudgeTest
	Judges []config.Judge
	Fleet  *gpu.Fleet
	Led    *ledger.Ledger
	RunID  string
	// Backoff is the wait before a transient failure is sent again.
	Backoff func(attempt int) time.Duration
	// Watch, when set, is told of every answer as it settles, on Run's
	// goroutine, and ticked while Run waits: the live grid and the
	// headless progress lines follow the qualification through it.
	Watch Watcher
}

// A Watcher follows a qualification as it runs (cli's live grid and
// progress lines). Both are called on Run's goroutine.
type Watcher interface {
	// Answer is one answer settled; kept is false for a request a stop
	// cancelled, which says nothing of the judge.
	Answer(c Call, kept bool)
	// Tick comes every TickEvery while answers are due.
	Tick(now time.Time)
}

// TickEvery paces a Watcher's ticks: answers that come in between are
// drawn together.
const TickEvery = 100 * time.Millisecond

// Job is one sample of one judge on one case, across its attempts.
type Job struct {
	Judge   config.Judge
	test    int
	sample  int
	attempt int
	Request chat.Request
	row     *ledger.Request // the current attempt's
	started bool            // the current attempt took a slot
}

// event is what happened to a job: the fleet dispatched it (server),
// or it ended (done), or its backoff after a transient failure is over
// (retry).
type event struct {
	job    *Job
	server string
	done   bool
	retry  bool
	res    chat.Result
	err    error
}

// Jobs is every request of a Qualification: every judge on every
// case, k samples each, rendered and ready to send.
func Jobs(cfg *config.Config, tests []config.JudgeTest, judges []config.Judge) []*Job {
	k := max(cfg.Scoring.Samples, 1)
	temp := 0.0
	if k > 1 {
		temp = 0.7 // votes at temperature 0 would all be one answer
	}
	var jobs []*Job
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
				jobs = append(jobs, &Job{Judge: j, test: ti, sample: s, Request: req})
			}
		}
	}
	return jobs
}

// Run sends every job and waits for every answer, also when ctx is
// cancelled (the fleet then ends what is left as cancelled). It returns
// the answers in job order, without the requests a cancel ended, and the
// first ledger error, which cancels the rest: nothing is sent that the
// ledger does not know of.
func (q *Qualification) Run(ctx context.Context, jobs []*Job) ([]Call, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Room for every event a job can have outstanding (two dispatches, an
	// end, a retry): the fleet may end jobs inside SubmitAll, on this
	// goroutine, and a full channel would block it for good.
	events := make(chan event, 4*len(jobs))
	calls := make([]Call, len(jobs))
	index := make(map[*Job]int, len(jobs))
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
	settle := func(qj *Job, call Call, err error) {
		calls[index[qj]] = call
		// A request cancelled by a stop says nothing of the judge: it is
		// left out, not counted a J-ERR.
		answered[index[qj]] = !(chat.ClassOf(err) == chat.ClassCanceled && ctx.Err() != nil)
		pending--
		if q.Watch != nil {
			q.Watch.Answer(call, answered[index[qj]])
		}
	}
	submit := func(batch []*Job) {
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
		q.Fleet.SubmitAll(ctx, out)
	}
	submit(jobs)

	beat := time.NewTicker(ledger.HeartbeatEvery)
	defer beat.Stop()
	var ticks <-chan time.Time
	if q.Watch != nil {
		t := time.NewTicker(TickEvery)
		defer t.Stop()
		ticks = t.C
	}
	for pending > 0 {
		select {
		case now := <-ticks:
			q.Watch.Tick(now)
		case <-beat.C:
			if err := q.Led.Heartbeat(q.RunID, time.Now()); err != nil {
				fail(err)
			}
		case ev := <-events:
			qj := ev.job
			switch {
			case ev.retry:
				submit([]*Job{qj})
			case !ev.done:
				if !qj.started {
					qj.started = true
					if err := q.Led.StartRequest(qj.row.ID, ev.server, time.Now()); err != nil {
						fail(err)
					}
				}
			default:
				call := q.call(qj, ev.res, ev.err)
				q.record(qj, ev.res, ev.err, call, fail)
				if q.retryable(qj, ev.err) && ctx.Err() == nil {
					time.AfterFunc(q.Backoff(qj.attempt), func() { events <- event{job: qj, retry: true} })
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
func (q *Qualification) retryable(qj *Job, err error) bool {
	return err != nil && chat.ClassOf(err).Transient() && !errors.Is(err, gpu.ErrGaveUp) && qj.attempt <= q.Cfg.Run.Retries
}

// call is what one attempt's answer (or failure) counts as.
func (q *Qualification) call(qj *Job, res chat.Result, err error) Call {
	c := Call{Judge: qj.Judge.Name, Case: q.Tests[qj.test].ID, Sample: qj.sample,
		PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, Latency: res.Latency}
	if err != nil {
		c.Err = chat.MessageOf(err)
		if c.Err == "" {
			c.Err = err.Error()
		}
		return c
	}
	c.Parsed = judge.ParseReplyFor(q.Tests[qj.test].Candidate, res.Content, res.FinishReason, qj.Judge.MaxTokens)
	return c
}

// insert writes a job's attempt to the ledger before it is sent.
func (q *Qualification) insert(qj *Job) error {
	input, err := json.Marshal(qj.Request.Messages)
	if err != nil {
		return err
	}
	params, _ := json.Marshal(map[string]any{"temperature": qj.Request.Temperature, "seed": qj.Request.Seed, "max_tokens": qj.Request.MaxTokens})
	qj.row = &ledger.Request{RunID: q.RunID, Purpose: ledger.PurposeJudge, Model: qj.Judge.Model,
		Test: q.Tests[qj.test].ID, Judge: qj.Judge.Name, Sample: qj.sample, Attempt: qj.attempt,
		Input: string(input), Params: string(params), Status: ledger.StatusQueued, QueuedAt: time.Now()}
	_, err = q.Led.InsertRequest(qj.row)
	return err
}

// record writes an attempt's end, with the verdict parsed from it.
func (q *Qualification) record(qj *Job, res chat.Result, err error, call Call, fail func(error)) {
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
	if err := q.Led.FinishRequest(qj.row); err != nil {
		fail(err)
	}
}

// fleetJob is the fleet's job for one attempt: its callbacks post events.
func (q *Qualification) fleetJob(qj *Job, events chan<- event) *gpu.Job {
	return &gpu.Job{Request: qj.Request, Purpose: chat.PurposeJudge, Pin: qj.Judge.FleetServer(), Timeout: q.Cfg.Run.Timeout,
		Dispatched: func(server string, loading bool) { events <- event{job: qj, server: server} },
		Done:       func(res chat.Result, err error) { events <- event{job: qj, done: true, res: res, err: err} },
	}
}

// StartRun records the qualify run in the ledger: no models, the
// judge battery's cases as its tests, scoring mode "qualify".
func StartRun(led *ledger.Ledger, id string, cfg *config.Config, tests []config.JudgeTest, started time.Time) error {
	ids := make([]string, len(tests))
	for i, t := range tests {
		ids[i] = t.ID
	}
	scoringJSON, err := json.Marshal(cfg.Scoring.Redacted())
	if err != nil {
		return err
	}
	err = led.CreateRun(ledger.RunRow{ID: id, Name: cfg.Name, Status: ledger.RunRunning, ScoringMode: Mode,
		ConfigJSON: cfg.RedactedJSON(), ScoringJSON: string(scoringJSON), Tests: ids, Repeat: max(cfg.Scoring.Samples, 1),
		StartedAt: started, Owner: led.Self(), Heartbeat: started})
	if err != nil {
		return fmt.Errorf("recording the qualify run: %w", err)
	}
	return nil
}

// Mode is the scoring mode the ledger keeps for a qualify run, so
// that `pitwall runs` can tell one from a battery run.
const Mode = "qualify"
