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

// An upsert, not INSERT OR REPLACE: REPLACE deletes the row and makes a
// new rowid, which would move the cell to the end of Cells' order.
const putCellSQL = `INSERT INTO cells (` + cellColumns + `)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
	ON CONFLICT (run_id, model, test, repeat) DO UPDATE SET
		status = excluded.status, server = excluded.server, output = excluded.output,
		reasoning = excluded.reasoning, tool_calls = excluded.tool_calls,
		checks = excluded.checks, error_class = excluded.error_class,
		error = excluded.error, attempts = excluded.attempts,
		prompt_tokens = excluded.prompt_tokens,
		completion_tokens = excluded.completion_tokens, ttft_us = excluded.ttft_us,
		latency_us = excluded.latency_us, tokens_per_sec = excluded.tokens_per_sec`

const putVerdictSQL = `INSERT INTO verdicts (` + verdictColumns + `)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
	ON CONFLICT (run_id, model, test, repeat, judge) DO UPDATE SET
		verdict = excluded.verdict, score = excluded.score,
		agreement = excluded.agreement, detail = excluded.detail,
		error = excluded.error, source = excluded.source,
		latency_ms = excluded.latency_ms, at_ms = excluded.at_ms`

// PutCell writes the latest state of a cell, replacing what was there for
// the same (run, model, test, repeat). Once it returns, the row is on disk.
func (l *Ledger) PutCell(c CellRow) error {
	return l.PutCells([]CellRow{c})
}

// PutCells writes the latest state of many cells in one transaction: all
// of them, or none.
func (l *Ledger) PutCells(cs []CellRow) error {
	if _, err := l.writer("put cell"); err != nil {
		return err
	}
	if len(cs) == 0 {
		return nil
	}
	return l.wr.do(l.cellsOp(cs))
}

func (l *Ledger) cellsOp(cs []CellRow) *op {
	return &op{name: "put cell", rows: len(cs), atomic: len(cs) > 1, run: func(b *batch) error {
		for i := range cs {
			if err := b.putCell(&cs[i]); err != nil {
				return err
			}
		}
		return nil
	}}
}

func (b *batch) putCell(c *CellRow) error {
	var texts [5]any
	for i, s := range []string{c.Output, c.Reasoning, c.ToolCalls, c.Checks, c.Error} {
		v, err := b.text(s)
		if err != nil {
			return b.l.wrap(cellName(c), err)
		}
		texts[i] = v
	}
	_, err := b.stmt(b.l.putCell).Exec(c.RunID, c.Model, c.Test, c.Repeat, c.Status, c.Server,
		texts[0], texts[1], texts[2], texts[3], c.ErrorClass, texts[4], c.Attempts, c.PromptTokens,
		c.CompletionTokens, usFromDuration(c.TTFT), usFromDuration(c.Latency), c.TokensPerSec)
	if err != nil {
		return b.l.wrap(cellName(c), err)
	}
	return nil
}

func cellName(c *CellRow) string {
	return fmt.Sprintf("put cell %s/%s/%s#%d", c.RunID, c.Model, c.Test, c.Repeat)
}

// Cells lists a run's cells in the order they were first put.
func (l *Ledger) Cells(runID string) ([]CellRow, error) {
	l.readWrites()
	rows, err := l.r.Query(`SELECT `+cellColumns+` FROM cells WHERE run_id = ? ORDER BY rowid`, runID)
	if err != nil {
		return nil, l.wrap("cells of run "+runID, err)
	}
	defer rows.Close()
	var (
		ptrs []*CellRow
		refs []textRef
	)
	text := func(dst *string) scanText { return scanText{dst, &refs} }
	for rows.Next() {
		var (
			c             = new(CellRow)
			ttft, latency int64
		)
		err := rows.Scan(&c.RunID, &c.Model, &c.Test, &c.Repeat, &c.Status, &c.Server,
			text(&c.Output), text(&c.Reasoning), text(&c.ToolCalls), text(&c.Checks), &c.ErrorClass,
			text(&c.Error), &c.Attempts, &c.PromptTokens, &c.CompletionTokens, &ttft, &latency, &c.TokensPerSec)
		if err != nil {
			return nil, l.wrap("cells of run "+runID, err)
		}
		c.TTFT = durationFromUS(ttft)
		c.Latency = durationFromUS(latency)
		ptrs = append(ptrs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap("cells of run "+runID, err)
	}
	if err := l.resolveTexts(l.r, refs); err != nil {
		return nil, l.wrap("cells of run "+runID, err)
	}
	out := make([]CellRow, len(ptrs))
	for i, c := range ptrs {
		out[i] = *c
	}
	return out, nil
}

// PutVerdict writes one judge's (or the jury's) verdict on a cell,
// replacing what that judge said before on it (a re-judge). Once it
// returns, the row is on disk.
func (l *Ledger) PutVerdict(v VerdictRow) error {
	if _, err := l.writer("put verdict"); err != nil {
		return err
	}
	return l.wr.do(l.verdictOp(v))
}

func (l *Ledger) verdictOp(v VerdictRow) *op {
	name := fmt.Sprintf("put verdict %s/%s/%s#%d by %s", v.RunID, v.Model, v.Test, v.Repeat, v.Judge)
	return &op{name: name, rows: 1, run: func(b *batch) error {
		detail, err := b.text(v.Detail)
		if err != nil {
			return l.wrap(name, err)
		}
		msg, err := b.text(v.Error)
		if err != nil {
			return l.wrap(name, err)
		}
		_, err = b.stmt(l.putVerdict).Exec(v.RunID, v.Model, v.Test, v.Repeat, v.Judge, v.Verdict,
			v.Score, v.Agreement, detail, msg, v.Source, v.LatencyMS, msOrNull(v.At))
		if err != nil {
			return l.wrap(name, err)
		}
		return nil
	}}
}

// Verdicts lists a run's verdicts in the order they were first put.
func (l *Ledger) Verdicts(runID string) ([]VerdictRow, error) {
	l.readWrites()
	rows, err := l.r.Query(`SELECT `+verdictColumns+` FROM verdicts WHERE run_id = ? ORDER BY rowid`, runID)
	if err != nil {
		return nil, l.wrap("verdicts of run "+runID, err)
	}
	defer rows.Close()
	var (
		ptrs []*VerdictRow
		refs []textRef
	)
	for rows.Next() {
		var (
			v  = new(VerdictRow)
			at sql.NullInt64
		)
		err := rows.Scan(&v.RunID, &v.Model, &v.Test, &v.Repeat, &v.Judge, &v.Verdict,
			&v.Score, &v.Agreement, scanText{&v.Detail, &refs}, scanText{&v.Error, &refs},
			&v.Source, &v.LatencyMS, &at)
		if err != nil {
			return nil, l.wrap("verdicts of run "+runID, err)
		}
		v.At = timeFromMS(at)
		ptrs = append(ptrs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap("verdicts of run "+runID, err)
	}
	if err := l.resolveTexts(l.r, refs); err != nil {
		return nil, l.wrap("verdicts of run "+runID, err)
	}
	out := make([]VerdictRow, len(ptrs))
	for i, v := range ptrs {
		out[i] = *v
	}
	return out, nil
}
