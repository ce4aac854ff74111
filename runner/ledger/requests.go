package ledger

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

const requestColumns = `id, run_id, purpose, server, model, test, repeat, judge, sample,
	attempt, input, params, cache_key, batch_id, status, output, reasoning, tool_calls,
	verdict, error_class, error, prompt_tokens, completion_tokens, ttft_us, latency_us,
	queued_ms, started_ms, ended_ms, candidate_model, round,
	input_ref, params_ref, output_ref, reasoning_ref, tool_calls_ref`

// The statements of the writer's hot path, prepared once on its single
// connection (see stmts).
const (
	// Every column, as given: a judge cache hit is recorded completed, and a
	// warm-up running, in this one write. Texts go by reference (texts.go).
	insertRequestSQL = `INSERT INTO requests (run_id, purpose, server, model, test, repeat,
		judge, sample, attempt, cache_key, batch_id, status, verdict, error_class, error,
		prompt_tokens, completion_tokens, ttft_us, latency_us, queued_ms, started_ms, ended_ms,
		candidate_model, round, input_ref, params_ref, output_ref, reasoning_ref, tool_calls_ref)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

	// A request written before it is sent (pending) has no end yet: its
	// end's columns keep their defaults, as insertRequestSQL would write
	// them, and the statement binds 17 values, not 29 (the binding is most
	// of an insert's cost in database/sql; insertOp picks it).
	insertPendingSQL = `INSERT INTO requests (run_id, purpose, server, model, test, repeat,
		judge, sample, attempt, cache_key, batch_id, status, queued_ms, candidate_model, round,
		input_ref, params_ref)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

	// Only an open request starts: one that CancelOpen has already cancelled
	// must not be sent.
	startRequestSQL = `UPDATE requests SET status = 'running', server = ?1, started_ms = ?2
		WHERE id = ?3 AND status IN ` + openStatuses

	// Server, batch id and start time are kept unless the finish gives them:
	// a request from a Batch API finishes without ever being started. The
	// inline texts are emptied: a row of an older schema finished now keeps
	// its texts by reference too.
	finishRequestSQL = finishSQL + `,
		server = CASE WHEN ?13 = '' THEN server ELSE ?13 END,
		started_ms = coalesce(?15, started_ms)
		WHERE id = ?16`

	// finishStartedSQL is finishRequestSQL and a start of the same request
	// in one statement (foldStarts): ?17 and ?18 are the start's server and
	// time, which it writes only where the start would have, on a request
	// still open. Every SET reads the row as it was before the statement.
	finishStartedSQL = finishSQL + `,
		server = CASE WHEN ?13 <> '' THEN ?13 WHEN status IN ` + openStatuses + ` THEN ?17 ELSE server END,
		started_ms = coalesce(?15, CASE WHEN status IN ` + openStatuses + ` THEN ?18 ELSE started_ms END)
		WHERE id = ?16`

	// finishSQL is what every finish sets, whether or not its start comes
	// with it.
	finishSQL = `UPDATE requests SET
		status = ?1, output = '', reasoning = '', tool_calls = '', verdict = ?5,
		error_class = ?6, error = ?7, prompt_tokens = ?8, completion_tokens = ?9,
		ttft_us = ?10, latency_us = ?11, ended_ms = ?12,
		batch_id = CASE WHEN ?14 = '' THEN batch_id ELSE ?14 END,
		output_ref = ?2, reasoning_ref = ?3, tool_calls_ref = ?4`

	requestsOfRunSQL = `SELECT ` + requestColumns + ` FROM requests WHERE run_id = ? ORDER BY id`

	// usageOfRunSQL is requestsOfRunSQL without the texts (input, params,
	// output, reasoning, tool calls): what a run spent needs none of them.
	usageOfRunSQL = `SELECT id, run_id, purpose, server, model, test, repeat, judge, sample,
	attempt, '', '', cache_key, batch_id, status, '', '', '',
	verdict, error_class, error, prompt_tokens, completion_tokens, ttft_us, latency_us,
	queued_ms, started_ms, ended_ms, candidate_model, round,
	NULL, NULL, NULL, NULL, NULL FROM requests WHERE run_id = ? ORDER BY id`

	// The cache_key <> '' and status terms let SQLite use the partial
	// index (completed rows with a key), which holds the rows of a key in
	// end order: the newest is read first, with no sort. Newest by end, not by id: a re-judge inserted before a cache
	// hit copied the older answer still ends after it.
	cachedJudgeSQL = `SELECT output, output_ref FROM requests
		WHERE cache_key = ? AND cache_key <> '' AND status = 'completed' AND purpose = 'judge'
		AND verdict <> 'error'
		ORDER BY ended_ms DESC NULLS LAST, id DESC NULLS LAST LIMIT 1`

	cachedInferenceSQL = `SELECT ` + requestColumns + ` FROM requests
		WHERE cache_key = ? AND cache_key <> '' AND status = 'completed' AND purpose = 'inference'
		ORDER BY ended_ms DESC NULLS LAST, id DESC NULLS LAST LIMIT 1`
)

// A cache key that is a SHA-256 in lower-case hex (as the runner's are) is
// stored as its 32 bytes, half the size in the row and in the cache key
// index; any other key is stored as given. Reads give it back in hex
// (keyColumn).

// keyColumn scans a cache_key column: a key stored as bytes reads as their
// lower-case hex, a key stored as text as it is.
type keyColumn string

func (k *keyColumn) Scan(v any) error {
	switch v := v.(type) {
	case []byte:
		*k = keyColumn(hex.EncodeToString(v))
	case string:
		*k = keyColumn(v)
	default:
		return fmt.Errorf("cache key of type %T", v)
	}
	return nil
}

// PostgreSQL keeps every key as TEXT, as given.
func (l *Ledger) keyArg(k string) any {
	if l.d.pg {
		return pgText(k)
	}
	if len(k) != 2*sha256.Size || strings.Trim(k, "0123456789abcdef") != "" {
		return k
	}
	b, err := hex.DecodeString(k)
	if err != nil {
		return k
	}
	return b
}

var purposes = map[string]bool{
	PurposeInference: true, PurposeJudge: true, PurposeWarmup: true, PurposeProbe: true,
}

// statuses are those a request can be inserted with; interrupted is only
// ever written by a reconcile.
var statuses = map[string]bool{
	StatusQueued: true, StatusSubmitted: true, StatusRunning: true,
	StatusCompleted: true, StatusError: true, StatusCanceled: true,
}

var terminal = map[string]bool{StatusCompleted: true, StatusError: true, StatusCanceled: true}

// CancelOpen cancels every queued, submitted or running request of a run,
// at the given time, and returns how many it cancelled. A stopped or
// crashed run leaves no request that looks in flight. Writes queued before
// it are applied first.
func (l *Ledger) CancelOpen(runID string, at time.Time) (int, error) {
	if l.wr == nil {
		return 0, l.wrap("cancel open requests", ErrReadOnly)
	}
	var n int64
	err := l.wr.do(runOp{runID, func(b *batch) error {
		res, err := b.tx.Exec(`UPDATE requests SET status = 'canceled', ended_ms = ?
			WHERE run_id = ? AND status IN `+openStatuses, msOrNull(at), runID)
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			return l.wrap("cancel open requests of run "+runID, err)
		}
		return nil
	}})
	return int(n), err
}

// RequestsUsage is Requests without the texts (Input, Params, Output,
// Reasoning and ToolCalls are empty): what a run spent, read without
// reading what it said.
func (l *Ledger) RequestsUsage(runID string) ([]Request, error) {
	return l.runRequests("requests of run "+runID, runID, usageOfRunSQL, runID)
}

// Requests lists a run's requests in the order they were inserted. If it
// finds requests open, their run is reconciled first (as in Run): a run
// whose process is gone lists none open.
func (l *Ledger) Requests(runID string) ([]Request, error) {
	return l.runRequests("requests of run "+runID, runID, requestsOfRunSQL, runID)
}

// runRequests runs a query of one run's requests, settling the run when
// an open request shows up.
func (l *Ledger) runRequests(op, runID, query string, args ...any) ([]Request, error) {
	out, err := l.queryRequests(op, query, args...)
	if err != nil || !anyOpen(out) {
		return out, err
	}
	run, err := scanRun(l.r.QueryRow(runByIDSQL, runID))
	if err != nil || run.Status != RunRunning {
		return out, nil // no run row (a test, a tool): nothing to settle by
	}
	run = l.settle(run)
	if run.Status != RunInterrupted {
		return out, nil
	}
	if out, err = l.queryRequests(op, query, args...); err != nil {
		return nil, err
	}
	// Rows the reconcile could not write (a read-only file) read as it
	// would have written them.
	for i := range out {
		if isOpen[out[i].Status] {
			out[i].Status, out[i].EndedAt = StatusInterrupted, run.EndedAt
		}
	}
	return out, nil
}

var isOpen = map[string]bool{StatusQueued: true, StatusSubmitted: true, StatusRunning: true}

func anyOpen(rs []Request) bool {
	for _, r := range rs {
		if isOpen[r.Status] {
			return true
		}
	}
	return false
}

// queryRequests reads requests, after the writes this process has queued.
func (l *Ledger) queryRequests(op, query string, args ...any) ([]Request, error) {
	l.caughtUp("")
	rows, err := l.r.Query(query, args...)
	if err != nil {
		return nil, l.wrap(op, err)
	}
	defer rows.Close()
	var (
		out  []Request
		refs [][5][]byte
	)
	for rows.Next() {
		r, ref, err := scanRequest(rows)
		if err != nil {
			return nil, l.wrap(op, err)
		}
		out = append(out, r)
		refs = append(refs, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap(op, err)
	}
	rows.Close() // the texts are read on a connection of the pool too
	var t texts
	for i := range out {
		out[i].addTexts(&t, refs[i])
	}
	if err := t.resolve(l); err != nil {
		return nil, l.wrap(op, err)
	}
	return out, nil
}

func (r *Request) addTexts(t *texts, ref [5][]byte) {
	t.add(&r.Input, ref[0])
	t.add(&r.Params, ref[1])
	t.add(&r.Output, ref[2])
	t.add(&r.Reasoning, ref[3])
	t.add(&r.ToolCalls, ref[4])
}

// CachedJudgeOutput returns the output of the newest completed judge
// request with this cache key (the one that ended last), from any run: the
// judge cache. A re-judge that completed replaces what earlier requests
// answered. A request that errored or was cancelled is never a cache hit.
// A write of this process that may change the answer (a judge request's
// end queued with QueueFinish) is committed first.
func (l *Ledger) CachedJudgeOutput(cacheKey string) (output string, ok bool, err error) {
	if cacheKey == "" {
		return "", false, nil
	}
	l.caughtUp(cacheKey)
	var ref []byte
	q, err := l.read(readCachedJudge)
	if err == nil {
		err = q.QueryRow(l.keyArg(cacheKey)).Scan(&output, &ref)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, l.wrap("judge cache", err)
	}
	var t texts
	t.add(&output, ref)
	if err := t.resolve(l); err != nil {
		return "", false, l.wrap("judge cache", err)
	}
	return output, true, nil
}

// CachedJudgeOutputs is CachedJudgeOutput for several keys, in a query
// for every cachedChunk of them: the outputs of the keys that hit, by key.
// A judge window looks up its requests with it, where a query a request
// was a twentieth of what a live judge request cost this process.
func (l *Ledger) CachedJudgeOutputs(keys []string) (map[string]string, error) {
	out := map[string]string{}
	var want []string
	for _, k := range keys {
		if k != "" {
			l.caughtUp(k)
			want = append(want, k)
		}
	}
	op := fmt.Sprintf("judge cache (%d keys)", len(want))
	var t texts
	outputs := make([]string, len(want))
	refs := make([][]byte, len(want))
	hit := make([]bool, len(want))
	for at := 0; at < len(want); at += cachedChunk {
		chunk := want[at:min(at+cachedChunk, len(want))]
		n := len(chunk)
		rows, err := l.queryPadded("WITH k(i, key) AS (VALUES ", padded(n, cachedChunk),
			func(i int, q *strings.Builder, args []any) []any {
				fmt.Fprintf(q, "(%d, ?)", i) // one text a size: rows past n are padding
				return append(args, l.keyArg(chunk[min(i, n-1)]))
			}, ")"+cachedJudgesSQL)
		if err != nil {
			return nil, l.wrap(op, err)
		}
		for rows.Next() {
			var i int
			var output string
			var ref []byte
			if err := rows.Scan(&i, &output, &ref); err != nil {
				rows.Close()
				return nil, l.wrap(op, err)
			}
			if i < 0 || i >= n {
				continue // a padding row: its key is the last one's
			}
			outputs[at+i], refs[at+i], hit[at+i] = output, ref, true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, l.wrap(op, err)
		}
	}
	for i := range want {
		if hit[i] {
			t.add(&outputs[i], refs[i])
		}
	}
	if err := t.resolve(l); err != nil {
		return nil, l.wrap(op, err)
	}
	for i, k := range want {
		if hit[i] {
			out[k] = outputs[i]
		}
	}
	return out, nil
}

// cachedChunk is the most keys CachedJudgeOutputs asks for in one query.
const cachedChunk = 256

// cachedJudgesSQL follows a VALUES list k(i, key) of cache keys: for each,
// the row cachedJudgeSQL reads (at most one: the correlated query stops at
// the newest by the same index). k's padding repeats the last key under
// the indices past the keys asked for, whose rows the reader skips.
const cachedJudgesSQL = `
SELECT k.i, r.output, r.output_ref FROM k JOIN requests r ON r.id = (
	SELECT id FROM requests
	WHERE cache_key = k.key AND cache_key <> '' AND status = 'completed' AND purpose = 'judge'
		AND verdict <> 'error'
	ORDER BY ended_ms DESC NULLS LAST, id DESC NULLS LAST LIMIT 1)`

// CachedInference returns the newest completed inference request (the one
// that ended last) with this cache key, from any run: the row an inference
// reuse takes its output, reasoning, tool calls, tokens and timings from.
// The key is the caller's: a hash of what makes the answer (server kind,
// model, messages, tools, parameters, seed), written as the CacheKey of
// every inference request that may be reused. ok is false on a miss. Like
// CachedJudgeOutput, it sees this process's queued writes of the key.
func (l *Ledger) CachedInference(cacheKey string) (r Request, ok bool, err error) {
	if cacheKey == "" {
		return Request{}, false, nil
	}
	l.caughtUp(cacheKey)
	q, err := l.read(readCachedInference)
	if err != nil {
		return Request{}, false, l.wrap("inference cache", err)
	}
	r, ref, err := scanRequest(q.QueryRow(l.keyArg(cacheKey)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Request{}, false, nil
	case err != nil:
		return Request{}, false, l.wrap("inference cache", err)
	}
	var t texts
	r.addTexts(&t, ref)
	if err := t.resolve(l); err != nil {
		return Request{}, false, l.wrap("inference cache", err)
	}
	return r, true, nil
}

// scanRequest reads a row of requestColumns; the texts held by reference
// are filled in by addTexts and resolve.
func scanRequest(s scanner) (Request, [5][]byte, error) {
	var (
		r                       Request
		ref                     [5][]byte
		ttft, latency           int64
		queued, started, closed sql.NullInt64
	)
	err := s.Scan(&r.ID, &r.RunID, &r.Purpose, &r.Server, &r.Model, &r.Test, &r.Repeat,
		&r.Judge, &r.Sample, &r.Attempt, &r.Input, &r.Params, (*keyColumn)(&r.CacheKey), &r.BatchID,
		&r.Status, &r.Output, &r.Reasoning, &r.ToolCalls, &r.Verdict, &r.ErrorClass, &r.Error,
		&r.PromptTokens, &r.CompletionTokens, &ttft, &latency, &queued, &started, &closed,
		&r.CandidateModel, &r.Round, &ref[0], &ref[1], &ref[2], &ref[3], &ref[4])
	if err != nil {
		return Request{}, ref, err
	}
	r.TTFT = durationFromUS(ttft)
	r.Latency = durationFromUS(latency)
	r.QueuedAt = timeFromMS(queued)
	r.StartedAt = timeFromMS(started)
	r.EndedAt = timeFromMS(closed)
	return r, ref, nil
}
