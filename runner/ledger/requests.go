package ledger

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

const requestColumns = `id, run_id, purpose, server, model, test, repeat, judge, sample,
	attempt, input, params, cache_key, batch_id, status, output, reasoning, tool_calls,
	verdict, error_class, error, prompt_tokens, completion_tokens, ttft_us, latency_us,
	queued_ms, started_ms, ended_ms, candidate_model, round`

// The hot statements of a request's life, prepared once on the writer's
// single connection.
const (
	// Every column, as given: a judge cache hit is recorded completed, and a
	// warm-up running, in this one write.
	insertRequestSQL = `INSERT INTO requests (run_id, purpose, server, model, test, repeat,
		judge, sample, attempt, input, params, cache_key, batch_id, status, output, reasoning,
		tool_calls, verdict, error_class, error, prompt_tokens, completion_tokens, ttft_us,
		latency_us, queued_ms, started_ms, ended_ms, candidate_model, round)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

	// Only an open request starts: one that CancelOpen has already cancelled
	// must not be sent.
	startRequestSQL = `UPDATE requests SET status = 'running', server = ?1, started_ms = ?2
		WHERE id = ?3 AND status IN ('queued', 'submitted', 'running')`

	// Server, batch id and start time are kept unless the finish gives them:
	// a request from a Batch API finishes without ever being started.
	finishRequestSQL = `UPDATE requests SET
		status = ?1, output = ?2, reasoning = ?3, tool_calls = ?4, verdict = ?5,
		error_class = ?6, error = ?7, prompt_tokens = ?8, completion_tokens = ?9,
		ttft_us = ?10, latency_us = ?11, ended_ms = ?12,
		server = CASE WHEN ?13 = '' THEN server ELSE ?13 END,
		batch_id = CASE WHEN ?14 = '' THEN batch_id ELSE ?14 END,
		started_ms = coalesce(?15, started_ms)
		WHERE id = ?16`

	requestsOfRunSQL = `SELECT ` + requestColumns + ` FROM requests WHERE run_id = ? ORDER BY id`

	// The cache_key <> '' term lets SQLite use the partial index, which
	// holds the rows of a key in end order: the newest is read first, with
	// no sort. Newest by end, not by id: a re-judge inserted before a cache
	// hit copied the older answer still ends after it.
	cachedJudgeSQL = `SELECT output FROM requests
		WHERE cache_key = ? AND cache_key <> '' AND status = 'completed' AND purpose = 'judge'
		AND verdict <> 'error'
		ORDER BY ended_ms DESC, id DESC LIMIT 1`

	cachedInferenceSQL = `SELECT ` + requestColumns + ` FROM requests
		WHERE cache_key = ? AND cache_key <> '' AND status = 'completed' AND purpose = 'inference'
		ORDER BY ended_ms DESC, id DESC LIMIT 1`
)

func (l *Ledger) prepare() error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&l.insertReq, insertRequestSQL},
		{&l.startReq, startRequestSQL},
		{&l.finishReq, finishRequestSQL},
	} {
		s, err := l.w.Prepare(p.sql)
		if err != nil {
			return l.wrap("prepare", err)
		}
		*p.dst = s
	}
	return nil
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

// InsertRequest records a request before it is sent and sets r.ID. It
// stores every field as given (a request that never goes out, like a judge
// cache hit, can be written completed at once); an empty Status becomes
// queued and a zero QueuedAt becomes now, both written back to r.
func (l *Ledger) InsertRequest(r *Request) (int64, error) {
	if _, err := l.writer("insert request"); err != nil {
		return 0, err
	}
	if r.Status == "" {
		r.Status = StatusQueued
	}
	if !purposes[r.Purpose] {
		return 0, l.wrap("insert request", fmt.Errorf("unknown purpose %q", r.Purpose))
	}
	if !statuses[r.Status] {
		return 0, l.wrap("insert request", fmt.Errorf("unknown status %q", r.Status))
	}
	if r.QueuedAt.IsZero() {
		r.QueuedAt = time.Now()
	}
	res, err := l.insertReq.Exec(r.RunID, r.Purpose, r.Server, r.Model, r.Test, r.Repeat,
		r.Judge, r.Sample, r.Attempt, r.Input, r.Params, r.CacheKey, r.BatchID, r.Status,
		r.Output, r.Reasoning, r.ToolCalls, r.Verdict, r.ErrorClass, r.Error, r.PromptTokens,
		r.CompletionTokens, usFromDuration(r.TTFT), usFromDuration(r.Latency),
		msOrNull(r.QueuedAt), msOrNull(r.StartedAt), msOrNull(r.EndedAt), r.CandidateModel, r.Round)
	if err != nil {
		return 0, l.wrap("insert request", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, l.wrap("insert request", err)
	}
	r.ID = id
	return id, nil
}

// StartRequest marks a request running on server. A request that has
// already ended (cancelled by CancelOpen, say) wraps ErrNotOpen and must not
// be sent; an unknown id wraps ErrNotFound.
func (l *Ledger) StartRequest(id int64, server string, at time.Time) error {
	if _, err := l.writer("start request"); err != nil {
		return err
	}
	res, err := l.startReq.Exec(server, msOrNull(at), id)
	if err != nil {
		return l.wrap(fmt.Sprintf("start request %d", id), err)
	}
	return l.oneRow(res, id, "start request")
}

// FinishRequest writes a request's end by r.ID: status (completed, error or
// canceled), output, reasoning, tool calls, verdict, error class and
// message, tokens, TTFT, latency and EndedAt (now if zero). Server, BatchID
// and StartedAt are updated only when set. It overwrites an earlier end, so
// a reply that lands after CancelOpen is kept. Once it returns, the row is
// on disk against a crash of the process.
func (l *Ledger) FinishRequest(r *Request) error {
	if _, err := l.writer("finish request"); err != nil {
		return err
	}
	op := fmt.Sprintf("finish request %d", r.ID)
	if !terminal[r.Status] {
		return l.wrap(op, fmt.Errorf("status %q is not an end (completed, error, canceled)", r.Status))
	}
	if r.EndedAt.IsZero() {
		r.EndedAt = time.Now()
	}
	res, err := l.finishReq.Exec(r.Status, r.Output, r.Reasoning, r.ToolCalls, r.Verdict,
		r.ErrorClass, r.Error, r.PromptTokens, r.CompletionTokens,
		usFromDuration(r.TTFT), usFromDuration(r.Latency), msOrNull(r.EndedAt),
		r.Server, r.BatchID, msOrNull(r.StartedAt), r.ID)
	if err != nil {
		return l.wrap(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return l.wrap(op, err)
	}
	if n == 0 {
		return l.wrap(op, ErrNotFound)
	}
	return nil
}

// oneRow turns an update that touched no row into ErrNotFound or, when the
// row exists but was not open, ErrNotOpen with its status.
func (l *Ledger) oneRow(res sql.Result, id int64, op string) error {
	op = fmt.Sprintf("%s %d", op, id)
	n, err := res.RowsAffected()
	if err != nil {
		return l.wrap(op, err)
	}
	if n > 0 {
		return nil
	}
	var status string
	err = l.w.QueryRow(`SELECT status FROM requests WHERE id = ?`, id).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return l.wrap(op, ErrNotFound)
	case err != nil:
		return l.wrap(op, err)
	}
	return l.wrap(op, fmt.Errorf("%w: it is %s", ErrNotOpen, status))
}

// CancelOpen cancels every queued, submitted or running request of a run,
// at the given time, and returns how many it cancelled. A stopped or
// crashed run leaves no request that looks in flight.
func (l *Ledger) CancelOpen(runID string, at time.Time) (int, error) {
	w, err := l.writer("cancel open requests")
	if err != nil {
		return 0, err
	}
	res, err := w.Exec(`UPDATE requests SET status = 'canceled', ended_ms = ?
		WHERE run_id = ? AND status IN ('queued', 'submitted', 'running')`, msOrNull(at), runID)
	if err != nil {
		return 0, l.wrap("cancel open requests of run "+runID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, l.wrap("cancel open requests of run "+runID, err)
	}
	return int(n), nil
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
	run, err := scanRun(l.r.QueryRow(`SELECT `+runColumns+` FROM runs WHERE id = ?`, runID))
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

func (l *Ledger) queryRequests(op, query string, args ...any) ([]Request, error) {
	rows, err := l.r.Query(query, args...)
	if err != nil {
		return nil, l.wrap(op, err)
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			return nil, l.wrap(op, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap(op, err)
	}
	return out, nil
}

// CachedJudgeOutput returns the output of the newest completed judge
// request with this cache key (the one that ended last), from any run: the
// judge cache. A re-judge that completed replaces what earlier requests
// answered. A request that errored or was cancelled is never a cache hit.
func (l *Ledger) CachedJudgeOutput(cacheKey string) (output string, ok bool, err error) {
	if cacheKey == "" {
		return "", false, nil
	}
	err = l.r.QueryRow(cachedJudgeSQL, cacheKey).Scan(&output)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, l.wrap("judge cache", err)
	}
	return output, true, nil
}

// CachedInference returns the newest completed inference request (the one
// that ended last) with this cache key, from any run: the row an inference
// reuse takes its output, reasoning, tool calls, tokens and timings from.
// The key is the caller's: a hash of what makes the answer (server kind,
// model, messages, tools, parameters, seed), written as the CacheKey of
// every inference request that may be reused. ok is false on a miss.
func (l *Ledger) CachedInference(cacheKey string) (r Request, ok bool, err error) {
	if cacheKey == "" {
		return Request{}, false, nil
	}
	r, err = scanRequest(l.r.QueryRow(cachedInferenceSQL, cacheKey))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Request{}, false, nil
	case err != nil:
		return Request{}, false, l.wrap("inference cache", err)
	}
	return r, true, nil
}

func scanRequest(s scanner) (Request, error) {
	var (
		r                       Request
		ttft, latency           int64
		queued, started, closed sql.NullInt64
	)
	err := s.Scan(&r.ID, &r.RunID, &r.Purpose, &r.Server, &r.Model, &r.Test, &r.Repeat,
		&r.Judge, &r.Sample, &r.Attempt, &r.Input, &r.Params, &r.CacheKey, &r.BatchID,
		&r.Status, &r.Output, &r.Reasoning, &r.ToolCalls, &r.Verdict, &r.ErrorClass, &r.Error,
		&r.PromptTokens, &r.CompletionTokens, &ttft, &latency, &queued, &started, &closed,
		&r.CandidateModel, &r.Round)
	if err != nil {
		return Request{}, err
	}
	r.TTFT = durationFromUS(ttft)
	r.Latency = durationFromUS(latency)
	r.QueuedAt = timeFromMS(queued)
	r.StartedAt = timeFromMS(started)
	r.EndedAt = timeFromMS(closed)
	return r, nil
}
