package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// Again says which finished cells a continued run sends again, besides
// the cells that never finished (pending, or cut off by a stop or a crash).
type Again struct {
	Errors    bool // cells that ended ⚠️ (pitwall retry --errors)
	Cancelled bool // cells a stop cancelled (pitwall resume, retry --cancelled)
}

// Resume continues a run in the ledger under the same id: one that was
// stopped, was interrupted, or whose process died. A cell whose inference
// completed keeps its answer (from its cell row, or from its completed
// request when the process died between the two); every other unfinished
// cell is sent again, as a new attempt beside the old ones; completed
// judge samples are taken from the ledger by their cache key. The run then
// ends as if it had never stopped. cfg is the run's config loaded again.
//
// With again set, cells that did finish (⚠️ errors, ⊘ cancels) are run again
// too: that is `pitwall retry`.
func Resume(cfg *config.Config, id string, again Again, opts Options) (*Run, error) {
	if opts.Ledger == nil {
		return nil, fmt.Errorf("runner: a ledger is required")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	row, err := opts.Ledger.Run(id)
	if err != nil {
		return nil, err
	}
	cont, err := restoredConfig(cfg, row)
	if err != nil {
		return nil, err
	}
	took := time.Now()
	if row, err = opts.Ledger.ResumeRun(row.ID, now()); err != nil {
		return nil, err
	}
	snap, err := history.LoadSnapshot(opts.Ledger, row.ID, "")
	if err != nil {
		return nil, err
	}
	done, err := opts.Ledger.CompletedInference(row.ID)
	if err != nil {
		return nil, err
	}
	opts.RunID = row.ID
	r, err := New(cont, opts)
	if err != nil {
		return nil, err
	}
	r.started.Store(true)
	r.owner.hold(took)
	if err := r.call(func(e *engine) error { return e.resume(snap, done, again) }); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// restoredConfig is cfg shaped as the run in the ledger was: its tests (the
// battery must still hold them), models, repeats and scoring.
func restoredConfig(cfg *config.Config, row ledger.RunRow) (*config.Config, error) {
	byID := map[string]config.Test{}
	for _, t := range cfg.Tests {
		byID[t.ID] = t
	}
	tests := make([]config.Test, 0, len(row.Tests))
	for _, tid := range row.Tests {
		t, ok := byID[tid]
		if !ok {
			return nil, fmt.Errorf("run %s: test %q is no longer in %s, so it cannot be judged or run again", row.ID, tid, cfg.Battery)
		}
		tests = append(tests, t)
	}
	again := *cfg
	again.Tests, again.Models = tests, row.Models
	again.Run.Repeat = max(row.Repeat, 1)
	// The run goes on as it began: its scoring, not the file's today. The
	// ledger keeps judge urls masked: their credentials come from the
	// config as it is now.
	stored, err := history.Scoring(row)
	if err != nil {
		return nil, err
	}
	if len(stored.Judges) == 0 && len(cfg.Scoring.Judges) > 0 {
		// A run scored by its checks alone (or imported from another
		// tool) is judged by the judges the config has now.
		stored = cfg.Scoring
	}
	sc, masked := stored.Unmasked(cfg.Scoring)
	if len(masked) > 0 {
		return nil, fmt.Errorf("run %s: the url of judge %s held credentials the ledger does not keep, and %s no longer has that judge: add it back", row.ID, strings.Join(masked, ", "), cfg.Path)
	}
	again.Scoring = sc
	return &again, nil
}

// resume makes the engine the run of snapshot b, then sends what is left.
func (e *engine) resume(b *state.BatteryRun, done map[ledger.CellKey]ledger.Request, again Again) error {
	e.table.restore(clipRows(b.Rows))
	e.totals.tokens = b.TokensGenerated
	e.report.started = b.Started
	e.move(inferring)
	var batch []*inferAttempt
	var fromLedger []*inferAttempt
	e.table.each(func(p cellPos) {
		c := e.table.at(p)
		send := !c.Status.Terminal() || again.Cancelled && c.Status == state.Cancelled ||
			again.Errors && c.Status == state.Errored
		if !send {
			if c.Status == state.Completed {
				e.totals.completed++
			}
			return
		}
		e.inference.inflight++
		a := newInferAttempt(e.inference, p, c.Attempts+1, nil)
		cell := e.table.edit(p)
		prevErr := cell.Status == state.Errored
		r := cell.EditReply()
		cell.Status, r.ErrorClass, r.Error = state.Pending, "", ""
		state.DropJudgments(cell, e.plan.Choices()...)
		if req, ok := done[ledger.CellKey{Model: c.Model, Test: c.Test, Repeat: int(p.rep)}]; ok && !prevErr {
			// Answered before the process died: paid for, not sent again.
			a.n = max(req.Attempt, 1)
			a.row = &req
			fromLedger = append(fromLedger, a)
			return
		}
		batch = append(batch, a)
	})
	for _, a := range fromLedger {
		res, err := resultOf(*a.row)
		a.row = nil // its row is finished already
		if err != nil {
			e.inference.settled(a, chat.Result{}, &chat.Error{Class: chat.ClassMalformed, Message: err.Error()})
			continue
		}
		e.inference.settled(a, res, nil)
	}
	e.inference.submitInference(batch)
	return nil
}

// resultOf is what a completed inference request in the ledger answered.
func resultOf(q ledger.Request) (chat.Result, error) {
	res := chat.Result{Server: q.Server, Model: q.Model, Content: q.Output, Reasoning: q.Reasoning, FinishReason: "stop",
		PromptTokens: q.PromptTokens, CompletionTokens: q.CompletionTokens, TTFT: q.TTFT, Latency: q.Latency}
	if q.ToolCalls != "" {
		if err := json.Unmarshal([]byte(q.ToolCalls), &res.ToolCalls); err != nil {
			return res, fmt.Errorf("request %d: its tool calls in the ledger are not readable: %w", q.ID, err)
		}
	}
	return res, nil
}
