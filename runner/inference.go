package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/judge"
	"pitwall/runner/ledger"
)

// buildRequest turns a test into the chat request every model gets.
func buildRequest(t config.Test, model string, run config.Run) gpu.Request {
	temp := run.Temperature
	seed := run.Seed
	req := gpu.Request{
		Model: model, Messages: messages(t), Tools: t.Tools, ToolChoice: t.ToolChoice,
		ResponseFormat: t.ResponseFormat, Temperature: &temp, Seed: &seed, MaxTokens: run.MaxTokens,
	}
	return req
}

// messages renders a test's conversation: its messages, or system + user.
func messages(t config.Test) []gpu.Message {
	var out []gpu.Message
	if t.System != "" && (len(t.Messages) == 0 || t.Messages[0].Role != "system") {
		out = append(out, gpu.Message{Role: "system", Content: t.System})
	}
	if len(t.Messages) > 0 {
		return append(out, t.Messages...)
	}
	return append(out, gpu.Message{Role: "user", Content: t.User})
}

// promptText is the system prompt and the user turns of a test as text, for
// the judge and the detail view.
func promptText(t config.Test) (system, prompt string) {
	system = t.System
	if len(t.Messages) == 0 {
		return system, t.User
	}
	var b strings.Builder
	for _, m := range t.Messages {
		if m.Role == "system" {
			if system == "" {
				system = m.Content
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if len(t.Messages) > 1 || m.Role != "user" {
			b.WriteString(m.Role + ": ")
		}
		b.WriteString(m.Content)
	}
	return system, b.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// submitInference records one attempt of a cell and hands it to the fleet.
func (r *Run) submitInference(ti, mi, rep, attempt int) {
	t := r.tests[ti]
	model := r.models[mi]
	req := buildRequest(t, model, r.cfg.Run)
	row := &ledger.Request{
		RunID: r.id, Purpose: ledger.PurposeInference, Model: model, Test: t.ID, Repeat: rep, Attempt: attempt,
		Input: mustJSON(req.Messages), Params: requestParams(req), Status: ledger.StatusQueued, QueuedAt: r.now(),
	}
	if _, err := r.led.InsertRequest(row); err != nil {
		// Without a ledger row the request must not be sent: nothing is
		// sent that the ledger does not know of.
		r.mu.Lock()
		r.fail(fmt.Sprintf("the ledger %s cannot be written (%v): nothing more is sent", r.led.Path(), err))
		r.mu.Unlock()
		r.settleInference(ti, mi, rep, attempt, row, gpu.Result{}, &gpu.Error{Class: "ledger", Message: err.Error(), Err: err})
		return
	}
	r.mu.Lock()
	c := r.table.edit(ti, mi, rep)
	r.move(c, Queued)
	c.Attempts = attempt
	r.mu.Unlock()
	r.changed()

	r.fleet.Submit(r.ctx, &gpu.Job{
		Request: req, Purpose: gpu.PurposeInference, Timeout: r.cfg.Run.Timeout,
		Dispatched: func(server string) {
			at := r.now()
			if err := r.led.StartRequest(row.ID, server, at); err != nil {
				r.log.Error("ledger: start request", "id", row.ID, "err", err)
			}
			r.mu.Lock()
			c := r.table.edit(ti, mi, rep)
			if !c.Status.Terminal() {
				r.move(c, Running)
				c.Server = server
			}
			r.mu.Unlock()
			r.changed()
		},
		Done: func(res gpu.Result, err error) {
			r.settleInference(ti, mi, rep, attempt, row, res, err)
		},
	})
}

func requestParams(req gpu.Request) string {
	return mustJSON(map[string]any{
		"temperature": req.Temperature, "seed": req.Seed, "max_tokens": req.MaxTokens,
		"tools": req.Tools, "tool_choice": req.ToolChoice, "response_format": req.ResponseFormat,
	})
}

// settleInference takes a finished attempt: it decides the cell, records
// it, retries transient errors, and starts judging when phase 1 ends.
func (r *Run) settleInference(ti, mi, rep, attempt int, row *ledger.Request, res gpu.Result, err error) {
	t := r.tests[ti]
	class := gpu.ClassOf(err)
	if err != nil && class == "" {
		class = gpu.ClassMalformed
	}
	cell := [3]int{ti, mi, rep}
	r.mu.Lock()
	stopping := r.stopping || r.failure != ""
	failovers := r.failovers[cell]
	retry := err != nil && !stopping && mayRetry(class, attempt, failovers, r.cfg.Run.Retries)
	if retry && class == gpu.ClassUnavailable {
		if r.failovers == nil {
			r.failovers = map[[3]int]int{}
		}
		r.failovers[cell]++
	}
	r.mu.Unlock()
	if stopping && err != nil {
		class = gpu.ClassCanceled
	}

	// The ledger first: what the screen shows as done is on disk.
	row.EndedAt = r.now()
	row.Server = firstNonEmpty(res.Server, row.Server, serverOf(err))
	if err != nil {
		row.Status = ledger.StatusError
		if class == gpu.ClassCanceled {
			row.Status = ledger.StatusCanceled
		}
		row.ErrorClass, row.Error = string(class), errMessage(err)
	} else {
		row.Status = ledger.StatusCompleted
		fillResult(row, res)
	}
	if row.ID != 0 {
		if lerr := r.led.FinishRequest(row); lerr != nil {
			r.log.Error("ledger: finish request", "id", row.ID, "err", lerr)
		}
	}

	if retry {
		wait := r.opts.Backoff(attempt)
		var ge *gpu.Error
		if errors.As(err, &ge) && ge.RetryAfter > wait {
			wait = ge.RetryAfter
		}
		r.mu.Lock()
		c := r.table.edit(ti, mi, rep)
		c.ErrorClass, c.Error = class, errMessage(err)
		r.move(c, Queued)
		r.mu.Unlock()
		r.changed()
		r.retryAfter(wait, func() { r.submitInference(ti, mi, rep, attempt+1) }, func() {
			r.settleInference(ti, mi, rep, attempt+1, &ledger.Request{}, gpu.Result{},
				&gpu.Error{Class: gpu.ClassCanceled, Message: "stopped before retry"})
		})
		return
	}

	var judgeJobs []judgeJob
	r.mu.Lock()
	c := r.table.edit(ti, mi, rep)
	c.Attempts = attempt
	switch {
	case err != nil && class == gpu.ClassCanceled:
		r.move(c, Cancelled)
		c.ErrorClass, c.Error = class, ""
	case err != nil:
		r.move(c, Errored)
		c.ErrorClass, c.Error = class, errMessage(err)
		c.Server = row.Server
	default:
		c.ErrorClass, c.Error = "", ""
		c.Server = res.Server
		c.Output, c.Reasoning, c.ToolCalls, c.FinishReason = res.Content, res.Reasoning, res.ToolCalls, res.FinishReason
		c.TTFT, c.Latency, c.TokensPerSec = res.TTFT, res.Latency, res.TokensPerSec
		c.PromptTokens, c.CompletionTokens = res.PromptTokens, res.CompletionTokens
		r.tokens += int64(res.CompletionTokens)
		out := judge.Output{Content: res.Content, ToolCalls: res.ToolCalls, Latency: res.Latency}
		checks := judge.Validate(judge.Expect{ToolChoice: t.ToolChoice, HasTools: len(t.Tools) > 0, ResponseFormat: t.ResponseFormat}, out)
		checks = append(checks, judge.RunChecks(t.Checks, out)...)
		c.Checks = checks
		if judge.Passed(checks) {
			r.move(c, Completed)
			if r.judgeStarts && !r.stopping {
				judgeJobs = r.planJudging(ti, mi, rep, r.wantedList())
			}
		} else {
			r.move(c, Failed)
		}
	}
	cellRow := r.cellRow(c)
	r.mu.Unlock()

	// The cell is on disk before the run can be seen to end.
	if perr := r.led.PutCell(cellRow); perr != nil {
		r.log.Error("ledger: put cell", "err", perr)
	}

	r.mu.Lock()
	r.inflight--
	if r.inflight == 0 && !r.judgeStarts && !r.stopping {
		r.judgeStarts = true
		if len(r.wanted) > 0 {
			judgeJobs = append(judgeJobs, r.planAllJudging(r.wantedList())...)
		}
	}
	if r.inflight == 0 && len(r.wanted) > 0 && !r.stopping && !r.finished {
		r.phase = PhaseJudgment
	}
	r.jinflight += countJobs(judgeJobs)
	r.finishIfDone()
	r.mu.Unlock()

	r.submitJudging(judgeJobs)
	r.changed()
}

// failoverAttempts is how many extra attempts a cell gets when its server
// goes away: moving work off a dead server is not the retry of a flaky
// answer, so it does not spend the configured retries.
const failoverAttempts = 8

// retryBudget is how many retries an error class earns (failovers aside).
func retryBudget(class gpu.ErrorClass, retries int) int {
	switch {
	case !class.Transient():
		return 0
	case class == gpu.ClassMalformed:
		// A cut or garbled stream is retried once: more rarely helps.
		return min(retries, 1)
	}
	return retries
}

// mayRetry decides whether attempt (1-based) of a cell, which lost
// failovers earlier attempts to servers going away, is tried again after an
// error of class.
func mayRetry(class gpu.ErrorClass, attempt, failovers, retries int) bool {
	if class == gpu.ClassUnavailable {
		return failovers < failoverAttempts
	}
	return attempt-failovers <= retryBudget(class, retries)
}

// retryAfter runs again after wait unless the run is stopped first, in which
// case it runs cancelled instead. Either runs exactly once.
func (r *Run) retryAfter(wait time.Duration, again, cancelled func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
			if r.ctx.Err() != nil {
				cancelled()
				return
			}
			again()
		case <-r.ctx.Done():
			cancelled()
		}
	}()
}

func fillResult(row *ledger.Request, res gpu.Result) {
	row.Output, row.Reasoning = res.Content, res.Reasoning
	if len(res.ToolCalls) > 0 {
		row.ToolCalls = mustJSON(res.ToolCalls)
	}
	row.PromptTokens, row.CompletionTokens = res.PromptTokens, res.CompletionTokens
	row.TTFT, row.Latency = res.TTFT, res.Latency
}

func errMessage(err error) string {
	var ge *gpu.Error
	if errors.As(err, &ge) {
		if ge.Message != "" {
			return ge.Message
		}
		if ge.Err != nil {
			return ge.Err.Error()
		}
	}
	return err.Error()
}

func serverOf(err error) string {
	var ge *gpu.Error
	if errors.As(err, &ge) {
		return ge.Server
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// move changes a cell's status and keeps the counts. Callers hold r.mu.
func (r *Run) move(c *Cell, to CellStatus) {
	r.countStatus(c.Status, -1)
	c.Status = to
	r.countStatus(to, +1)
}

func (r *Run) countStatus(s CellStatus, d int) {
	switch s {
	case Pending:
		r.counts.Pending += d
	case Queued, Loading:
		r.counts.Queued += d
	case Running:
		r.counts.Running += d
	case Completed:
		r.counts.Completed += d
	case Failed:
		r.counts.Failed += d
	case Errored:
		r.counts.Errored += d
	case Cancelled:
		r.counts.Cancelled += d
	}
}

// cellRow is the ledger's copy of a cell. Callers hold r.mu (or own c).
func (r *Run) cellRow(c *Cell) ledger.CellRow {
	row := ledger.CellRow{
		RunID: r.id, Model: c.Model, Test: c.Test, Repeat: c.Repeat, Status: string(c.Status), Server: c.Server,
		Output: c.Output, Reasoning: c.Reasoning, ErrorClass: string(c.ErrorClass), Error: c.Error, Attempts: c.Attempts,
		PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, TTFT: c.TTFT, Latency: c.Latency,
		TokensPerSec: c.TokensPerSec,
	}
	if c.Status == Queued || c.Status == Running || c.Status == Loading {
		row.Status = string(Pending)
	}
	if len(c.ToolCalls) > 0 {
		row.ToolCalls = mustJSON(c.ToolCalls)
	}
	if len(c.Checks) > 0 {
		row.Checks = mustJSON(c.Checks)
	}
	return row
}
