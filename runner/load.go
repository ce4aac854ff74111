package runner

import (
	"encoding/json"
	"fmt"

	"pitwall/gpu"
	"pitwall/judge"
	"pitwall/runner/ledger"
)

// LoadSnapshot rebuilds a run's snapshot from the ledger alone, for `show`.
// judgeName "" takes the run's own judge.
func LoadSnapshot(led *ledger.Ledger, id, judgeName string) (*BatteryRun, error) {
	run, cells, verdicts, err := readRun(led, id)
	if err != nil {
		return nil, err
	}
	if judgeName == "" {
		judgeName = defaultJudge(run)
	}
	repeat := max(run.Repeat, 1)
	table := newCellTable(run.Tests, run.Models, repeat)
	tindex, mindex := map[string]int{}, map[string]int{}
	for i, t := range run.Tests {
		tindex[t] = i
	}
	for i, m := range run.Models {
		mindex[m] = i
	}
	r := &Run{table: table, active: judgeName}
	r.counts.Pending = len(run.Tests) * len(run.Models) * repeat
	for _, row := range cells {
		ti, ok1 := tindex[row.Test]
		mi, ok2 := mindex[row.Model]
		if !ok1 || !ok2 || row.Repeat >= repeat {
			continue
		}
		c := table.edit(ti, mi, row.Repeat)
		r.move(c, CellStatus(row.Status))
		c.Server, c.Output, c.Reasoning, c.Attempts = row.Server, row.Output, row.Reasoning, row.Attempts
		c.ErrorClass, c.Error = gpu.ErrorClass(row.ErrorClass), row.Error
		c.TTFT, c.Latency, c.TokensPerSec = row.TTFT, row.Latency, row.TokensPerSec
		c.PromptTokens, c.CompletionTokens = row.PromptTokens, row.CompletionTokens
		if row.ToolCalls != "" {
			_ = json.Unmarshal([]byte(row.ToolCalls), &c.ToolCalls)
		}
		if row.Checks != "" {
			_ = json.Unmarshal([]byte(row.Checks), &c.Checks)
		}
		r.tokens += int64(row.CompletionTokens)
	}
	for _, v := range verdicts {
		ti, ok1 := tindex[v.Test]
		mi, ok2 := mindex[v.Model]
		if !ok1 || !ok2 || v.Repeat >= repeat {
			continue
		}
		j := &Judgment{Judge: v.Judge, Status: JudgmentDone, Verdict: judge.Verdict(v.Verdict), Score: v.Score,
			Agreement: v.Agreement, Error: v.Error, Source: "ledger"}
		if v.Judge == JuryName {
			var jr judge.JuryResult
			if json.Unmarshal([]byte(v.Detail), &jr) == nil {
				j.Jury = &jr
			}
		} else {
			var res judge.JudgeResult
			if json.Unmarshal([]byte(v.Detail), &res) == nil {
				j.Samples = res.Samples
			}
		}
		setJudgment(table.edit(ti, mi, v.Repeat), j)
	}
	r.countVerdicts()
	infos := make([]TestInfo, len(run.Tests))
	for i, t := range run.Tests {
		infos[i] = TestInfo{ID: t}
	}
	b := &BatteryRun{ID: run.ID, Name: run.Name, Status: RunStatus(run.Status), Phase: PhaseDone,
		Models: run.Models, Tests: infos, Repeat: repeat, Rows: table.publish(), ActiveJudge: judgeName,
		ScoringMode: run.ScoringMode, Started: run.StartedAt, Ended: run.EndedAt, Counts: r.counts,
		TokensGenerated: r.tokens, Final: true}
	seen := map[string]bool{}
	for _, v := range verdicts {
		if !seen[v.Judge] {
			seen[v.Judge] = true
			b.Judges = append(b.Judges, v.Judge)
		}
	}
	return b, nil
}

// ConfigPath is the config file a run in the ledger was started from.
func ConfigPath(led *ledger.Ledger, id string) (string, error) {
	row, err := led.Run(id)
	if err != nil {
		return "", err
	}
	if p := runConfigPath(row); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("run %s: the ledger does not say which config it came from", row.ID)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

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
