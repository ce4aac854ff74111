package ledger

import (
	"database/sql"
	"fmt"
)

const cellColumns = `run_id, model, test, repeat, status, server, output, reasoning,
	tool_calls, checks, error_class, error, attempts, prompt_tokens, completion_tokens,
	ttft_us, latency_us, tokens_per_sec`

const verdictColumns = `run_id, model, test, repeat, judge, verdict, score, agreement,
	detail, error, source, latency_ms, at_ms`

// PutCell writes the latest state of a cell, replacing what was there for
// the same (run, model, test, repeat).
func (l *Ledger) PutCell(c CellRow) error {
	w, err := l.writer("put cell")
	if err != nil {
		return err
	}
	// An upsert, not INSERT OR REPLACE: REPLACE deletes the row and makes a
	// new rowid, which would move the cell to the end of Cells' order.
	_, err = w.Exec(`INSERT INTO cells (`+cellColumns+`)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (run_id, model, test, repeat) DO UPDATE SET
			status = excluded.status, server = excluded.server, output = excluded.output,
			reasoning = excluded.reasoning, tool_calls = excluded.tool_calls,
			checks = excluded.checks, error_class = excluded.error_class,
			error = excluded.error, attempts = excluded.attempts,
			prompt_tokens = excluded.prompt_tokens,
			completion_tokens = excluded.completion_tokens, ttft_us = excluded.ttft_us,
			latency_us = excluded.latency_us, tokens_per_sec = excluded.tokens_per_sec`,
		c.RunID, c.Model, c.Test, c.Repeat, c.Status, c.Server, c.Output, c.Reasoning,
		c.ToolCalls, c.Checks, c.ErrorClass, c.Error, c.Attempts, c.PromptTokens,
		c.CompletionTokens, usFromDuration(c.TTFT), usFromDuration(c.Latency), c.TokensPerSec)
	if err != nil {
		return l.wrap(fmt.Sprintf("put cell %s/%s/%s#%d", c.RunID, c.Model, c.Test, c.Repeat), err)
	}
	return nil
}

// Cells lists a run's cells in the order they were first put.
func (l *Ledger) Cells(runID string) ([]CellRow, error) {
	rows, err := l.r.Query(`SELECT `+cellColumns+` FROM cells WHERE run_id = ? ORDER BY rowid`, runID)
	if err != nil {
		return nil, l.wrap("cells of run "+runID, err)
	}
	defer rows.Close()
	var out []CellRow
	for rows.Next() {
		var (
			c             CellRow
			ttft, latency int64
		)
		err := rows.Scan(&c.RunID, &c.Model, &c.Test, &c.Repeat, &c.Status, &c.Server,
			&c.Output, &c.Reasoning, &c.ToolCalls, &c.Checks, &c.ErrorClass, &c.Error,
			&c.Attempts, &c.PromptTokens, &c.CompletionTokens, &ttft, &latency, &c.TokensPerSec)
		if err != nil {
			return nil, l.wrap("cells of run "+runID, err)
		}
		c.TTFT = durationFromUS(ttft)
		c.Latency = durationFromUS(latency)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap("cells of run "+runID, err)
	}
	return out, nil
}

// PutVerdict writes one judge's (or the jury's) verdict on a cell,
// replacing what that judge said before on it (a re-judge).
func (l *Ledger) PutVerdict(v VerdictRow) error {
	w, err := l.writer("put verdict")
	if err != nil {
		return err
	}
	_, err = w.Exec(`INSERT INTO verdicts (`+verdictColumns+`)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (run_id, model, test, repeat, judge) DO UPDATE SET
			verdict = excluded.verdict, score = excluded.score,
			agreement = excluded.agreement, detail = excluded.detail,
			error = excluded.error, source = excluded.source,
			latency_ms = excluded.latency_ms, at_ms = excluded.at_ms`,
		v.RunID, v.Model, v.Test, v.Repeat, v.Judge, v.Verdict, v.Score, v.Agreement,
		v.Detail, v.Error, v.Source, v.LatencyMS, msOrNull(v.At))
	if err != nil {
		return l.wrap(fmt.Sprintf("put verdict %s/%s/%s#%d by %s", v.RunID, v.Model, v.Test, v.Repeat, v.Judge), err)
	}
	return nil
}

// Verdicts lists a run's verdicts in the order they were first put.
func (l *Ledger) Verdicts(runID string) ([]VerdictRow, error) {
	rows, err := l.r.Query(`SELECT `+verdictColumns+` FROM verdicts WHERE run_id = ? ORDER BY rowid`, runID)
	if err != nil {
		return nil, l.wrap("verdicts of run "+runID, err)
	}
	defer rows.Close()
	var out []VerdictRow
	for rows.Next() {
		var (
			v  VerdictRow
			at sql.NullInt64
		)
		err := rows.Scan(&v.RunID, &v.Model, &v.Test, &v.Repeat, &v.Judge, &v.Verdict,
			&v.Score, &v.Agreement, &v.Detail, &v.Error, &v.Source, &v.LatencyMS, &at)
		if err != nil {
			return nil, l.wrap("verdicts of run "+runID, err)
		}
		v.At = timeFromMS(at)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap("verdicts of run "+runID, err)
	}
	return out, nil
}
