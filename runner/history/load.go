package history

import (
	"encoding/json"
	"fmt"
	"time"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// Plan is the scoring plan a run in the ledger was made with: the one its
// runner, its export and its reopening all read.
func Plan(run ledger.RunRow) (scoring.Plan, error) {
	sc, err := Scoring(run)
	if err != nil {
		return scoring.Plan{}, err
	}
	if sc.Mode == "" {
		sc.Mode = scoring.Mode(run.ScoringMode)
	}
	c := config.Config{Scoring: sc}
	return c.Plan(), nil
}

// Scoring is the scoring section a run in the ledger was made with.
func Scoring(run ledger.RunRow) (config.Scoring, error) {
	var sc config.Scoring
	if run.ScoringJSON == "" {
		return sc, nil
	}
	if err := json.Unmarshal([]byte(run.ScoringJSON), &sc); err != nil {
		return sc, fmt.Errorf("run %s: its scoring record in the ledger is not readable: %w", run.ID, err)
	}
	return sc, nil
}

// LoadSnapshot rebuilds a run's snapshot from the ledger alone, for `show`.
// judgeName "" takes the run's own judge in view. Reading the run settles
// it (ledger.Run): a run whose process died reads interrupted, ended at its
// last heartbeat, and its unfinished cells cancelled.
func LoadSnapshot(led *ledger.Ledger, id, judgeName string) (*state.BatteryRun, error) {
	run, cells, verdicts, err := readRun(led, id)
	if err != nil {
		return nil, err
	}
	plan, err := Plan(run)
	if err != nil {
		return nil, err
	}
	if judgeName != "" {
		plan = plan.WithInView(judgeName)
	}
	repeat := max(run.Repeat, 1)
	rows := make([]*state.Row, len(run.Tests))
	tindex, mindex := map[string]int{}, map[string]int{}
	for i, t := range run.Tests {
		tindex[t] = i
		cells := make([]state.Cell, len(run.Models)*repeat)
		for mi, m := range run.Models {
			for r := range repeat {
				cells[mi*repeat+r] = state.Cell{Model: m, Test: t, Repeat: r, Status: state.Pending}
			}
		}
		rows[i] = state.NewRow(cells)
	}
	for i, m := range run.Models {
		mindex[m] = i
	}
	cellAt := func(test, model string, rep int) *state.Cell {
		ti, ok1 := tindex[test]
		mi, ok2 := mindex[model]
		if !ok1 || !ok2 || rep < 0 || rep >= repeat {
			return nil
		}
		return rows[ti].Cells[mi*repeat+rep]
	}
	var tokens int64
	for _, row := range cells {
		c := cellAt(row.Test, row.Model, row.Repeat)
		if c == nil {
			continue
		}
		if err := fillCell(c, row); err != nil {
			return nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		tokens += int64(row.CompletionTokens)
	}
	if run.Status == ledger.RunInterrupted {
		stopDeadCells(rows, run)
	}
	// An agent cell's steps are its inference requests, one per turn.
	reqs, err := led.Requests(run.ID)
	if err != nil {
		return nil, err
	}
	cellCalls := map[ck]string{}
	for _, row := range cells {
		cellCalls[ck{row.Model, row.Test, row.Repeat}] = row.ToolCalls
	}
	for k, steps := range trajectories(reqs) {
		lastObserved(steps, cellCalls[k])
		if c := cellAt(k.t, k.m, k.r); c != nil {
			r := c.EditReply()
			r.Steps = make([]state.Step, len(steps))
			for i, s := range steps {
				r.Steps[i] = s.Step
			}
		}
	}
	for _, v := range verdicts {
		c := cellAt(v.Test, v.Model, v.Repeat)
		if c == nil {
			continue
		}
		j, err := judgment(v)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		state.SetJudgment(c, j)
	}
	infos := make([]state.TestInfo, len(run.Tests))
	rec := RunRecord(run)
	for i, t := range run.Tests {
		infos[i] = state.TestInfo{ID: t, Category: rec.Categories[t], Severity: rec.Severities[t]}
	}
	return &state.BatteryRun{ID: run.ID, Name: run.Name, Status: state.RunStatus(run.Status), Phase: state.PhaseDone,
		Models: run.Models, Tests: infos, Repeat: repeat, Rows: rows, Plan: plan,
		Started: run.StartedAt, Ended: run.EndedAt, Counts: state.TallyRows(rows, plan.InView),
		TokensGenerated: tokens, Final: true}, nil
}

// fillCell sets c from its ledger row.
func fillCell(c *state.Cell, row ledger.CellRow) error {
	c.Status = state.CellStatus(row.Status)
	c.Server, c.Attempts = row.Server, row.Attempts
	c.TTFT, c.Latency, c.TokensPerSec = row.TTFT, row.Latency, row.TokensPerSec
	c.PromptTokens, c.CompletionTokens = row.PromptTokens, row.CompletionTokens
	r := c.Said()
	r.Output, r.Reasoning = row.Output, row.Reasoning
	r.ErrorClass, r.Error = chat.ErrorClass(row.ErrorClass), row.Error
	if err := decode(row.ToolCalls, &r.ToolCalls); err != nil {
		return fmt.Errorf("cell %s/%s: tool calls: %w", row.Model, row.Test, err)
	}
	if err := decode(row.Checks, &r.Checks); err != nil {
		return fmt.Errorf("cell %s/%s: checks: %w", row.Model, row.Test, err)
	}
	c.Reply = nil
	if !r.IsZero() {
		c.Reply = &r
	}
	return nil
}

// judgment is a verdict read back from its ledger row.
func judgment(v ledger.VerdictRow) (*state.Judgment, error) {
	j := &state.Judgment{Judge: v.Judge, Status: state.JudgmentDone, Verdict: scoring.Verdict(v.Verdict), Score: v.Score,
		Agreement: v.Agreement, Error: v.Error, Source: "ledger", Latency: msDuration(v.LatencyMS)}
	if v.Judge == scoring.JuryName {
		var jr scoring.JuryResult
		if err := decode(v.Detail, &jr); err != nil {
			return nil, fmt.Errorf("jury verdict on %s/%s: %w", v.Model, v.Test, err)
		}
		j.Jury = &jr
		return j, nil
	}
	var res scoring.JudgeResult
	if err := decode(v.Detail, &res); err != nil {
		return nil, fmt.Errorf("verdict of %s on %s/%s: %w", v.Judge, v.Model, v.Test, err)
	}
	j.Samples = res.Samples
	return j, nil
}

// LoadCell reads one cell of a run whole, with every judge's verdict on
// it: what a live run keeps only a preview of (state.Cell.Clipped). An
// agent cell's steps are not read: a live run keeps them whole.
func LoadCell(led *ledger.Ledger, runID string, ref state.CellRef) (*state.Cell, error) {
	c, err := loadCellRow(led, runID, ref)
	if err != nil {
		return nil, err
	}
	verdicts, err := led.CellVerdicts(runID, ref.Model, ref.Test, ref.Repeat)
	if err != nil {
		return nil, err
	}
	for _, v := range verdicts {
		j, err := judgment(v)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", runID, err)
		}
		state.SetJudgment(c, j)
	}
	return c, nil
}

// LoadReply reads what one cell of a run said (its texts, checks and
// error) without its verdicts. Unlike LoadCell it neither queries the
// verdicts nor waits for the ledger's queued writes: a cell this process
// has just written is read from the writer's memory.
func LoadReply(led *ledger.Ledger, runID string, ref state.CellRef) (state.Reply, error) {
	c, err := loadCellRow(led, runID, ref)
	if err != nil {
		return state.Reply{}, err
	}
	return c.Said(), nil
}

// loadCellRow is a cell as its ledger row has it.
func loadCellRow(led *ledger.Ledger, runID string, ref state.CellRef) (*state.Cell, error) {
	row, err := led.Cell(runID, ref.Model, ref.Test, ref.Repeat)
	if err != nil {
		return nil, err
	}
	c := &state.Cell{Model: ref.Model, Test: ref.Test, Repeat: ref.Repeat}
	if err := fillCell(c, row); err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	return c, nil
}

// stopDeadCells shows the cells that an interrupted run left unfinished as
// a stop leaves them (⊘), saying why: nothing is running them any more.
func stopDeadCells(rows []*state.Row, run ledger.RunRow) {
	why := fmt.Sprintf("interrupted: the process running run %s went away before this cell finished", run.ID)
	for _, row := range rows {
		for i := range row.Cells {
			if c := row.Cells[i]; !c.Status.Terminal() {
				r := c.EditReply()
				c.Status, r.ErrorClass, r.Error = state.Cancelled, chat.ClassCanceled, why
			}
		}
	}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// decode reads a JSON column; an empty one leaves v alone.
func decode(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

// ConfigPath is the config file a run in the ledger was started from.
func ConfigPath(led *ledger.Ledger, id string) (string, error) {
	row, err := led.Run(id)
	if err != nil {
		return "", err
	}
	var c struct {
		Path string `json:"path"`
	}
	if err := decode(row.ConfigJSON, &c); err == nil && c.Path != "" {
		return c.Path, nil
	}
	return "", fmt.Errorf("run %s: the ledger does not say which config it came from", row.ID)
}

// readRun reads a run's row, cells and verdicts; id may be "last" or a prefix.
func readRun(led *ledger.Ledger, id string) (ledger.RunRow, []ledger.CellRow, []ledger.VerdictRow, error) {
	run, err := led.Run(id)
	if err != nil {
		return run, nil, nil, err
	}
	cells, err := led.Cells(run.ID)
	if err != nil {
		return run, nil, nil, err
	}
	verdicts, err := led.Verdicts(run.ID)
	return run, cells, verdicts, err
}
