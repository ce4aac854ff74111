package ledger

import (
	"database/sql"
	"fmt"
	"strings"
)

const cellColumns = `run_id, model, test, repeat, status, server, output, reasoning,
	tool_calls, checks, error_class, error, attempts, prompt_tokens, completion_tokens,
	ttft_us, latency_us, tokens_per_sec, output_ref, reasoning_ref, tool_calls_ref, checks_ref`

const verdictColumns = `run_id, model, test, repeat, judge, verdict, score, agreement,
	detail, error, source, latency_ms, at_ms, detail_ref`

// An upsert, not INSERT OR REPLACE: REPLACE deletes the row and makes a new
// rowid, which would move the cell to the end of Cells' order. The inline
// texts are emptied: a cell of an older schema keeps them by reference now.
const putCellSQL = `INSERT INTO cells (run_id, model, test, repeat, status, server,
		error_class, error, attempts, prompt_tokens, completion_tokens, ttft_us, latency_us,
		tokens_per_sec, output_ref, reasoning_ref, tool_calls_ref, checks_ref)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
	ON CONFLICT (run_id, model, test, repeat) DO UPDATE SET
		status = excluded.status, server = excluded.server,
		output = '', reasoning = '', tool_calls = '', checks = '',
		error_class = excluded.error_class, error = excluded.error,
		attempts = excluded.attempts, prompt_tokens = excluded.prompt_tokens,
		completion_tokens = excluded.completion_tokens, ttft_us = excluded.ttft_us,
		latency_us = excluded.latency_us, tokens_per_sec = excluded.tokens_per_sec,
		output_ref = excluded.output_ref, reasoning_ref = excluded.reasoning_ref,
		tool_calls_ref = excluded.tool_calls_ref, checks_ref = excluded.checks_ref`

const putVerdictSQL = `INSERT INTO verdicts (run_id, model, test, repeat, judge, verdict,
		score, agreement, error, source, latency_ms, at_ms, detail_ref)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
	ON CONFLICT (run_id, model, test, repeat, judge) DO UPDATE SET
		verdict = excluded.verdict, score = excluded.score,
		agreement = excluded.agreement, detail = '', error = excluded.error,
		source = excluded.source, latency_ms = excluded.latency_ms, at_ms = excluded.at_ms,
		detail_ref = excluded.detail_ref`

// PutCell writes the latest state of a cell, replacing what was there for
// the same (run, model, test, repeat), and returns once it is committed.
func (l *Ledger) PutCell(c CellRow) error {
	if l.wr == nil {
		return l.wrap("put cell", ErrReadOnly)
	}
	return l.wr.do(&cellOp{c})
}

// QueueCell is PutCell made asynchronously (see Ack).
func (l *Ledger) QueueCell(c CellRow, ack Ack) {
	if l.wr == nil {
		refuseNow(l.wrap("put cell", ErrReadOnly), ack)
		return
	}
	l.wr.later(&cellOp{c}, "", ack)
}

type cellOp struct{ c CellRow }

func (o *cellOp) apply(b *batch) error {
	c := &o.c
	op := opName{what: "put cell", of: ofCell, run: c.RunID, model: c.Model, test: c.Test, repeat: c.Repeat}
	var out, reasoning, calls, checks []byte
	if err := b.refs([]*[]byte{&out, &reasoning, &calls, &checks}, c.Output, c.Reasoning, c.ToolCalls, c.Checks); err != nil {
		return b.w.l.wrap(op.String(), err)
	}
	return b.exec(stmtPutCell, op, nil, c.RunID, c.Model, c.Test, c.Repeat, c.Status, c.Server,
		c.ErrorClass, c.Error, c.Attempts, c.PromptTokens, c.CompletionTokens,
		usFromDuration(c.TTFT), usFromDuration(c.Latency), c.TokensPerSec, out, reasoning, calls, checks)
}

// Cells lists a run's cells in the order they were first put.
func (l *Ledger) Cells(runID string) ([]CellRow, error) {
	l.caughtUp("")
	return l.queryCells("cells of run "+runID, `WHERE run_id = ? ORDER BY rowid`, runID)
}

// Cell reads one cell of a run whole; a cell never put wraps ErrNotFound.
// A cell this Ledger has written lately (queued, or committed and still
// remembered: see recentCells) is read from memory, without a query: the
// process running a run is the only writer of its cells.
func (l *Ledger) Cell(runID, model, test string, repeat int) (CellRow, error) {
	op := fmt.Sprintf("cell %s/%s/%s#%d", runID, model, test, repeat)
	if l.wr != nil {
		if c, ok := l.wr.queuedCell(CellKey{model, test, repeat}, runID); ok {
			return c, nil
		}
	}
	q, err := l.read(readCell)
	if err != nil {
		return CellRow{}, l.wrap(op, err)
	}
	rows, err := q.Query(l.d.args([]any{runID, model, test, repeat})...)
	if err != nil {
		return CellRow{}, l.wrap(op, err)
	}
	// The cell is read to be quoted (a judge's prompt): its pieces are
	// remembered again, so that quoting them stores nothing new.
	out, err := l.scanCells(op, rows, true)
	if err != nil {
		return CellRow{}, err
	}
	if len(out) == 0 {
		return CellRow{}, l.wrap(op, ErrNotFound)
	}
	return out[0], nil
}

// CellsAt reads cells of a run whole, as Cell does, in a query for every
// cellsAtChunk of them not in the writer's memory; a cell never put is
// missing from the map. A judge reads its window's replies with it.
func (l *Ledger) CellsAt(runID string, keys []CellKey) (map[CellKey]CellRow, error) {
	out := make(map[CellKey]CellRow, len(keys))
	var want []CellKey
	for _, k := range keys {
		if l.wr != nil {
			if c, ok := l.wr.queuedCell(k, runID); ok {
				out[k] = c
				continue
			}
		}
		want = append(want, k)
	}
	op := fmt.Sprintf("%d cells of run %s", len(want), runID)
	for len(want) > 0 {
		n := min(len(want), cellsAtChunk)
		chunk := want[:n]
		want = want[n:]
		rows, err := l.queryPadded(`SELECT `+cellColumns+` FROM cells WHERE run_id = ? AND (model, test, repeat) IN (VALUES `,
			padded(n, cellsAtChunk), func(i int, q *strings.Builder, args []any) []any {
				q.WriteString("(?,?,CAST(? AS INTEGER))") // PostgreSQL reads a bare parameter in VALUES as text
				k := chunk[min(i, n-1)]                   // padded with the last key repeated
				return append(args, k.Model, k.Test, k.Repeat)
			}, ")", runID)
		if err != nil {
			return nil, l.wrap(op, err)
		}
		// Read to be quoted, as Cell's are: their pieces are remembered.
		cells, err := l.scanCells(op, rows, true)
		if err != nil {
			return nil, err
		}
		// Keyed by the key asked for: PostgreSQL stores a name it cannot
		// hold (a NUL, bytes that are not UTF-8) mapped (pgText), and the
		// row reads back in that form.
		asked := make(map[CellKey]CellKey, n)
		for _, k := range chunk {
			asked[l.d.storedKey(k)] = k
		}
		for _, c := range cells {
			if k, ok := asked[CellKey{c.Model, c.Test, c.Repeat}]; ok {
				out[k] = c
			}
		}
	}
	return out, nil
}

// cellsAtChunk is the most cells CellsAt asks for in one query (three
// parameters each).
const cellsAtChunk = 256

func (l *Ledger) queryCells(op, where string, args ...any) ([]CellRow, error) {
	rows, err := l.r.Query(`SELECT `+cellColumns+` FROM cells `+where, args...)
	if err != nil {
		return nil, l.wrap(op, err)
	}
	return l.scanCells(op, rows, false)
}

func (l *Ledger) scanCells(op string, rows *sql.Rows, recall bool) ([]CellRow, error) {
	defer rows.Close()
	var (
		out  []CellRow
		refs [][4][]byte
	)
	for rows.Next() {
		var (
			c             CellRow
			ref           [4][]byte
			ttft, latency int64
		)
		err := rows.Scan(&c.RunID, &c.Model, &c.Test, &c.Repeat, &c.Status, &c.Server,
			&c.Output, &c.Reasoning, &c.ToolCalls, &c.Checks, &c.ErrorClass, &c.Error,
			&c.Attempts, &c.PromptTokens, &c.CompletionTokens, &ttft, &latency, &c.TokensPerSec,
			&ref[0], &ref[1], &ref[2], &ref[3])
		if err != nil {
			return nil, l.wrap(op, err)
		}
		c.TTFT = durationFromUS(ttft)
		c.Latency = durationFromUS(latency)
		out = append(out, c)
		refs = append(refs, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap(op, err)
	}
	rows.Close() // the texts are read on a connection of the pool too
	t := texts{recall: recall}
	for i := range out {
		c := &out[i]
		t.add(&c.Output, refs[i][0])
		t.add(&c.Reasoning, refs[i][1])
		t.add(&c.ToolCalls, refs[i][2])
		t.add(&c.Checks, refs[i][3])
	}
	if err := t.resolve(l); err != nil {
		return nil, l.wrap(op, err)
	}
	return out, nil
}

// PutVerdict writes one judge's (or the jury's) verdict on a cell,
// replacing what that judge said before on it (a re-judge), and returns
// once it is committed.
func (l *Ledger) PutVerdict(v VerdictRow) error {
	if l.wr == nil {
		return l.wrap("put verdict", ErrReadOnly)
	}
	return l.wr.do(verdictOp{v})
}

// QueueVerdict is PutVerdict made asynchronously (see Ack).
func (l *Ledger) QueueVerdict(v VerdictRow, ack Ack) {
	if l.wr == nil {
		refuseNow(l.wrap("put verdict", ErrReadOnly), ack)
		return
	}
	l.wr.later(verdictOp{v}, "", ack)
}

type verdictOp struct{ v VerdictRow }

func (o verdictOp) apply(b *batch) error {
	v := &o.v
	op := opName{what: "put verdict", of: ofVerdict, run: v.RunID, model: v.Model, test: v.Test, repeat: v.Repeat, judge: v.Judge}
	detail, err := b.ref(v.Detail)
	if err != nil {
		return b.w.l.wrap(op.String(), err)
	}
	return b.exec(stmtPutVerdict, op, nil, v.RunID, v.Model, v.Test, v.Repeat, v.Judge, v.Verdict,
		v.Score, v.Agreement, v.Error, v.Source, v.LatencyMS, msOrNull(v.At), detail)
}

// Verdicts lists a run's verdicts in the order they were first put.
func (l *Ledger) Verdicts(runID string) ([]VerdictRow, error) {
	l.caughtUp("")
	return l.queryVerdicts("verdicts of run "+runID, `WHERE run_id = ? ORDER BY rowid`, runID)
}

// CellVerdicts lists the verdicts on one cell of a run, every judge's and
// the jury's, in the order they were first put.
func (l *Ledger) CellVerdicts(runID, model, test string, repeat int) ([]VerdictRow, error) {
	l.caughtUp("")
	return l.queryVerdicts(fmt.Sprintf("verdicts on %s/%s/%s#%d", runID, model, test, repeat),
		`WHERE run_id = ? AND model = ? AND test = ? AND repeat = ? ORDER BY rowid`, runID, model, test, repeat)
}

func (l *Ledger) queryVerdicts(op, where string, args ...any) ([]VerdictRow, error) {
	rows, err := l.r.Query(`SELECT `+verdictColumns+` FROM verdicts `+where, args...)
	if err != nil {
		return nil, l.wrap(op, err)
	}
	defer rows.Close()
	var (
		out  []VerdictRow
		refs [][]byte
	)
	for rows.Next() {
		var (
			v   VerdictRow
			at  sql.NullInt64
			ref []byte
		)
		err := rows.Scan(&v.RunID, &v.Model, &v.Test, &v.Repeat, &v.Judge, &v.Verdict,
			&v.Score, &v.Agreement, &v.Detail, &v.Error, &v.Source, &v.LatencyMS, &at, &ref)
		if err != nil {
			return nil, l.wrap(op, err)
		}
		v.At = timeFromMS(at)
		out = append(out, v)
		refs = append(refs, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap(op, err)
	}
	rows.Close()
	var t texts
	for i := range out {
		t.add(&out[i].Detail, refs[i])
	}
	if err := t.resolve(l); err != nil {
		return nil, l.wrap(op, err)
	}
	return out, nil
}
