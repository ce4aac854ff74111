package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// buildRequest turns a test into the chat request every model gets.
func buildRequest(t config.Test, model string, run config.Run) chat.Request {
	temp := run.Temperature
	seed := run.Seed
	req := chat.Request{
		Model: model, Messages: t.Conversation(), Tools: t.Tools,
		ResponseFormat: t.ResponseFormat, Temperature: &temp, Seed: &seed, MaxTokens: run.MaxTokens,
	}
	if t.SendsToolChoice(run) {
		// Otherwise tool_choice only validates the reply (check.Validate).
		req.ToolChoice = t.ToolChoice
	}
	return req
}

func requestParams(req chat.Request) string {
	return mustJSON(paramsJSON{MaxTokens: req.MaxTokens, ResponseFormat: req.ResponseFormat, Seed: req.Seed,
		Temperature: req.Temperature, ToolChoice: req.ToolChoice, Tools: req.Tools})
}

// paramsJSON and keyJSON are what requestParams and inferenceKey render:
// structs, not maps, for speed, with their keys in the sorted order
// encoding/json gives a map's, so that the bytes (and the keys of answers
// already in a ledger) are those of the maps they replace
// (TestRequestJSONIsTheMapsBytes).
type paramsJSON struct {
	MaxTokens      int                  `json:"max_tokens"`
	ResponseFormat *chat.ResponseFormat `json:"response_format"`
	Seed           *int                 `json:"seed"`
	Temperature    *float64             `json:"temperature"`
	ToolChoice     any                  `json:"tool_choice"`
	Tools          []chat.Tool          `json:"tools"`
}

type keyJSON struct {
	MaxTokens      int                  `json:"max_tokens"`
	Messages       []chat.Message       `json:"messages"`
	Model          string               `json:"model"`
	ResponseFormat *chat.ResponseFormat `json:"response_format"`
	Seed           *int                 `json:"seed"`
	Temperature    int                  `json:"temperature"`
	ToolChoice     any                  `json:"tool_choice"`
	Tools          []chat.Tool          `json:"tools"`
	V              string               `json:"v"`
}

// inferenceKey names an inference request's answer for reuse: everything
// that makes it (model, messages, tools and their choice, response format,
// temperature, seed, max_tokens), hashed. Only requests at temperature 0
// have one: at any other, the same request may rightly answer otherwise.
func inferenceKey(req chat.Request) string {
	if req.Temperature == nil || *req.Temperature != 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(mustJSON(keyJSON{V: "pitwall-inference-v1", Model: req.Model, Messages: req.Messages,
		Tools: req.Tools, ToolChoice: req.ToolChoice, ResponseFormat: req.ResponseFormat, Temperature: 0,
		Seed: req.Seed, MaxTokens: req.MaxTokens})))
	return hex.EncodeToString(sum[:])
}

// mustJSON renders values pitwall built itself (never user input that JSON
// cannot hold), so an error is a bug.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("runner: " + err.Error())
	}
	return string(b)
}

// submitInference writes each attempt's ledger row, then hands them all to
// the fleet at once: nothing is sent that the ledger does not know of, and
// placement sees the whole batch.
func (in *inferencePart) submitInference(batch []*inferAttempt) {
	r := in.e.r
	var (
		send []*inferAttempt
		rows []*ledger.Request
		reqs []chat.Request
	)
	for _, a := range batch {
		t := r.tests[a.cell.test]
		model := r.models[a.cell.model]
		req, params := in.inferenceRequest(a)
		a.ctx = in.e.phases.phaseCtx
		a.row = &ledger.Request{
			RunID: r.id, Purpose: ledger.PurposeInference, Model: model, Test: t.ID, Repeat: int(a.cell.rep), Attempt: a.n,
			Input: chat.MessagesJSON(req.Messages), Params: params, CacheKey: inferenceKey(req),
			Status: ledger.StatusQueued, QueuedAt: r.now(),
		}
		if in.reused(a) {
			continue
		}
		send = append(send, a)
		rows = append(rows, a.row)
		reqs = append(reqs, req)
	}
	in.e.pub.dirty = true
	if len(send) == 0 {
		return
	}
	// One commit for the whole submission, before the fleet sees any of it.
	if err := r.led.InsertRequests(rows); err != nil {
		in.e.fail(err)
		for _, a := range send {
			a.row = nil
			in.settled(a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "not sent: the ledger cannot be written"})
		}
		return
	}
	jobs := make([]*gpu.Job, len(send))
	for i, a := range send {
		a.row.Input, a.row.Params = "", "" // on disk; the row's end writes neither
		c := in.e.table.edit(a.cell)
		c.Status, c.Attempts = state.Queued, a.n
		jobs[i] = in.e.job(a, reqs[i], chat.PurposeInference, "")
		in.agentJob(a, jobs[i])
	}
	r.fleet.SubmitAll(in.e.phases.phaseCtx, jobs)
}

// reused settles a from an identical request that completed before, when
// the run reuses inference ([run] reuse_inference, --reuse): its row is
// recorded as served from the ledger, and nothing is sent.
func (in *inferencePart) reused(a *inferAttempt) bool {
	r := in.e.r
	if !r.cfg.Run.ReuseInference || a.row.CacheKey == "" {
		return false
	}
	prev, ok, err := r.led.CachedInference(a.row.CacheKey)
	if err != nil || !ok {
		return false
	}
	res := chat.Result{Server: ledger.ServerCache, Content: prev.Output, Reasoning: prev.Reasoning,
		PromptTokens: prev.PromptTokens, CompletionTokens: prev.CompletionTokens, TTFT: prev.TTFT, Latency: prev.Latency,
		FinishReason: "stop"}
	if prev.ToolCalls != "" {
		if err := json.Unmarshal([]byte(prev.ToolCalls), &res.ToolCalls); err != nil {
			return false
		}
	}
	a.row.StartedAt = a.row.QueuedAt
	a.row.End(a.row.QueuedAt, res, nil)
	r.led.QueueInsert(*a.row, in.e.ack)
	a.row = nil
	in.settled(a, res, nil)
	return true
}

func (in *inferencePart) dispatched(a *inferAttempt, server string, loading bool) {
	in.e.markStarted(&a.attempt, server)
	c := in.e.table.at(a.cell)
	if c.Status.Terminal() || c.Attempts != a.n {
		return
	}
	c = in.e.table.edit(a.cell)
	c.Status, c.Server = state.Running, server
	if loading {
		c.Status = state.Loading
	}
	in.e.pub.dirty = true
}

// done takes a finished attempt: the ledger first, then a retry
// or the cell's outcome.
func (in *inferencePart) done(a *inferAttempt, res chat.Result, err error) {
	if a.row != nil {
		a.row.End(in.e.r.now(), res, err)
		in.e.r.led.QueueFinish(a.row, in.e.ack)
	}
	class := chat.ClassOf(err)
	if err != nil && class == "" {
		class = chat.ClassMalformed
	}
	cell := a.cell
	// Work the fleet gave up on (no server came back within max_wait) is
	// not retried: the run goes on with what it has.
	if err != nil && in.e.life == inferring && !errors.Is(err, gpu.ErrGaveUp) &&
		mayRetry(class, a.try(), in.failovers[cell], in.e.r.cfg.Run.Retries, in.e.r.cfg.Run.Temperature == 0) {
		if class == chat.ClassUnavailable {
			in.failovers[cell]++
		}
		wait := in.e.r.opts.Backoff(a.n)
		msg := chat.MessageOf(err)
		var ce *chat.Error
		if errors.As(err, &ce) && ce.RetryAfter > wait {
			// The fleet ended the job if the wait was beyond its timeout
			// or max_wait: this one is within them, and the cell says so.
			wait = ce.RetryAfter
			msg = fmt.Sprintf("%s (server %s asked to retry after %s: waiting until %s)",
				msg, ce.Server, gpu.WaitText(ce.RetryAfter), in.e.r.now().Add(wait).Format("15:04:05"))
		}
		c := in.e.table.edit(a.cell)
		r := c.EditReply()
		r.ErrorClass, r.Error, c.Status = class, msg, state.Queued
		in.e.pub.dirty = true
		in.e.waitToRetry(a, wait)
		return
	}
	in.settled(a, res, err)
}

func (in *inferencePart) retry(a *inferAttempt) {
	if in.e.life != inferring {
		in.settled(a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "stopped before retry"})
		return
	}
	in.submitInference([]*inferAttempt{newInferAttempt(in, a.cell, a.n+1, a.loop)})
}

// settled decides a cell from its last attempt, records it, and
// plans its judging when judging is pipelined.
func (in *inferencePart) settled(a *inferAttempt, res chat.Result, err error) {
	if in.agentContinues(a, res, err) {
		return // an agent cell's next step is on its way
	}
	r := in.e.r
	t := r.tests[a.cell.test]
	in.inflight--
	in.e.pub.dirty = true
	class := chat.ClassOf(err)
	if err != nil && (class == "" || in.e.life != inferring) {
		class = chat.ClassMalformed
		if in.e.life != inferring {
			class = chat.ClassCanceled
		}
	}
	c := in.e.table.edit(a.cell)
	c.Attempts = a.n
	reply := c.EditReply()
	switch {
	case err != nil && class == chat.ClassCanceled:
		c.Status, reply.ErrorClass, reply.Error = state.Cancelled, class, ""
	case err != nil:
		c.Status, reply.ErrorClass, reply.Error = state.Errored, class, chat.MessageOf(err)
		// A failed request took time too: a stream cut after 500 ms says so.
		c.TTFT, c.Latency, c.CompletionTokens = res.TTFT, res.Latency, res.CompletionTokens
		if class == chat.ClassCut {
			// What the model said before it stopped is the answer there
			// is: the cell shows it and exports carry it, marked cut.
			reply.Output, reply.Reasoning, reply.ToolCalls, reply.FinishReason = res.Content, res.Reasoning, res.ToolCalls, res.FinishReason
		}
		if a.row != nil {
			c.Server = a.row.Server
		}
	case res.PromptCut > 0 && !r.cfg.Run.AcceptCutPrompts:
		// The model answered part of the test: no check can pass it.
		c.Status, reply.ErrorClass = state.Errored, chat.ClassPromptCut
		reply.Error = fmt.Sprintf("the server cut the prompt to the model's context of %d tokens: the model never saw all of the test "+
			"(give the model a longer context, such as Ollama's num_ctx, or set [run] accept_cut_prompts = true)", res.PromptCut)
		c.Server = res.Server
		reply.Output, reply.Reasoning, reply.ToolCalls, reply.FinishReason = res.Content, res.Reasoning, res.ToolCalls, res.FinishReason
		c.TTFT, c.Latency, c.TokensPerSec = res.TTFT, res.Latency, res.TokensPerSec
		c.PromptTokens, c.CompletionTokens, reply.PromptCut = res.PromptTokens, res.CompletionTokens, res.PromptCut
		in.e.totals.tokens += int64(res.CompletionTokens)
	default:
		reply.ErrorClass, reply.Error = "", ""
		c.Server = res.Server
		reply.Output, reply.Reasoning, reply.ToolCalls, reply.FinishReason = res.Content, res.Reasoning, res.ToolCalls, res.FinishReason
		c.TTFT, c.Latency, c.TokensPerSec = res.TTFT, res.Latency, res.TokensPerSec
		c.PromptTokens, c.CompletionTokens, reply.PromptCut = res.PromptTokens, res.CompletionTokens, res.PromptCut
		in.e.totals.tokens += int64(res.CompletionTokens)
		reply.Checks, _ = t.Judge(check.Output{Content: res.Content, ToolCalls: res.ToolCalls, Latency: res.Latency})
		in.agentSettled(a, c, reply) // an agent cell is checked over its whole loop
		c.Status = state.Failed
		if check.Passed(reply.Checks) {
			c.Status = state.Completed
			in.e.totals.completed++
		}
	}
	// The cell is on disk before the run can be seen to end; the live
	// state keeps a preview of its texts.
	r.led.QueueCell(in.cellRow(c), in.e.ack)
	clipCell(c)
	if c.Status == state.Completed && in.e.plan.Judging == scoring.Pipelined && in.e.life == inferring {
		in.e.judges.queueCell(a.cell, in.e.judges.wantedList())
	}
}

// failoverAttempts is how many extra attempts a cell gets when its server
// goes away: moving work off a dead server is not the retry of a flaky
// answer, so it does not spend the configured retries.
const failoverAttempts = 8

// retryBudget is how many retries an error class earns (failovers aside).
// deterministic says the request is sent at temperature 0, so that the
// same request again is likely to meet the same end.
func retryBudget(class chat.ErrorClass, retries int, deterministic bool) int {
	switch {
	case !class.Transient():
		return 0
	case class == chat.ClassMalformed:
		// A garbled answer is retried once: more rarely helps.
		return min(retries, 1)
	case class == chat.ClassCut && deterministic:
		// A model that cut its own reply (Ollama ends a stream after one
		// token repeated too often) cuts the identical request again: one
		// retry covers a dropped connection, more only repeat the cut.
		return min(retries, 1)
	}
	return retries
}

// mayRetry decides whether attempt (1-based) of a cell, which lost
// failovers earlier attempts to servers going away, is tried again after an
// error of class; deterministic as for retryBudget.
func mayRetry(class chat.ErrorClass, attempt, failovers, retries int, deterministic bool) bool {
	if class == chat.ClassUnavailable {
		return failovers < failoverAttempts
	}
	return attempt-failovers <= retryBudget(class, retries, deterministic)
}

// cellRow is the ledger's copy of a cell.
func (in *inferencePart) cellRow(c *state.Cell) ledger.CellRow {
	said := c.Said()
	row := ledger.CellRow{
		RunID: in.e.r.id, Model: c.Model, Test: c.Test, Repeat: c.Repeat, Status: string(c.Status), Server: c.Server,
		Output: said.Output, Reasoning: said.Reasoning, ErrorClass: string(said.ErrorClass), Error: said.Error, Attempts: c.Attempts,
		PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, TTFT: c.TTFT, Latency: c.Latency,
		TokensPerSec: c.TokensPerSec,
	}
	if !c.Status.Terminal() {
		row.Status = string(state.Pending)
	}
	switch {
	case len(said.Steps) > 0 && len(said.ToolCalls) > 0:
		row.ToolCalls = mustJSON(stepCallsJSON(said.Steps))
	case len(said.ToolCalls) > 0:
		row.ToolCalls = mustJSON(said.ToolCalls)
	}
	if len(said.Checks) > 0 {
		row.Checks = mustJSON(said.Checks)
	}
	return row
}

// stepCallJSON is a call of an agent cell's loop as the cell row keeps it:
// chat.ToolCall's fields, which every reader of the row reads, and the
// observation the call was answered with. The ledger has the others in the
// next step's input; the last step's calls are never sent again, so the
// row is where history finds theirs.
type stepCallJSON struct {
	ID          string  `json:"id,omitempty"`
	Name        string  `json:"name"`
	Arguments   string  `json:"arguments"`
	Observation *string `json:"observation"` // null for a call never run (beside a DONE)
}

func stepCallsJSON(steps []state.Step) []stepCallJSON {
	var out []stepCallJSON
	for _, s := range steps {
		for _, c := range s.Calls {
			sc := stepCallJSON{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
			if c.Observation != "" || c.Mocked {
				sc.Observation = &c.Observation
			}
			out = append(out, sc)
		}
	}
	return out
}
