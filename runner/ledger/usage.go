package ledger

import (
	"context"
	"database/sql"
	"time"
)

// Usage is what one share of a run's requests used, summed by SQLite, so
// that a run's spend is read without reading its rows into memory (a
// summary of 100,000 judged cells reads 200,000 of them).
type Usage struct {
	Purpose string // PurposeInference or PurposeJudge
	// Key is the tested model of an inference share and the judge of a
	// judging one; All says the share is all of the purpose's requests.
	Key string
	All bool
	// Model is the model of the share's first request (a judge's model).
	Model string
	// Requests counts every row; Live those sent to a server (answered,
	// failed or cancelled after dispatch), Cached and Shared those
	// answered by ServerCache and ServerShared, Abandoned those written
	// before sending, as every request is, and never dispatched.
	Requests, Live, Cached, Shared, Abandoned int
	// Cells counts the cells the requests were for (a judge request's is
	// its candidate's).
	Cells int
	// Tokens of live requests, as their servers reported them.
	PromptTokens, CompletionTokens int
	// Slot is the sum of the live requests' latencies; Wall how long at
	// least one of them was in flight (the union of their intervals, each
	// its latency up to its end).
	Slot, Wall time.Duration
}

// usageSQL counts a run's inference and judge requests by share: one row
// a tested model or judge, then one a purpose (key NULL). A share's model
// is its first request's. A cell is a (tested model, test, repeat): a
// judge request's is its candidate's. The text is plain SQL that SQLite
// and PostgreSQL read alike (no booleans summed, no bare columns beside an
// aggregate), so the dialect passes it through. q is read more than once
// but NOT MATERIALIZED: scanned again, it costs a little CPU once a run;
// kept, it costs SQLite 8 MB at the end of a run of 100,000 judged cells,
// which its allocator then keeps. A purpose's cells are its shares' cells
// added up where no two shares can hold one cell: inference (a share is a
// tested model, part of its cells' names) or a purpose with one share (one
// judge); only judging by several judges counts them again (a scan of
// every request, a third of the query's time otherwise). The wall times
// are spansSQL's.
const usageSQL = `
WITH q AS NOT MATERIALIZED (
	SELECT id, purpose, CASE purpose WHEN 'judge' THEN judge ELSE model END AS k, server,
		CASE WHEN server NOT IN ('', ?2, ?3) THEN 1 ELSE 0 END AS live,
		CASE WHEN candidate_model <> '' THEN candidate_model ELSE model END || ' ' || test || ' ' || repeat AS cell,
		prompt_tokens, completion_tokens, latency_us
	FROM requests WHERE run_id = ?1 AND purpose IN ('inference', 'judge')
),
counts AS (
	SELECT purpose, k, min(id) AS first, count(*) AS n, sum(live) AS live,
		sum(CASE WHEN server = ?2 THEN 1 ELSE 0 END) AS cached, sum(CASE WHEN server = ?3 THEN 1 ELSE 0 END) AS shared,
		sum(CASE WHEN server = '' THEN 1 ELSE 0 END) AS abandoned, count(DISTINCT cell) AS cells,
		sum(live * prompt_tokens) AS pt, sum(live * completion_tokens) AS ct, sum(live * latency_us) AS slot
	FROM q GROUP BY purpose, k
)
SELECT c.purpose, c.k, r.model, c.n, c.live, c.cached, c.shared, c.abandoned, c.cells, c.pt, c.ct, c.slot
FROM counts c JOIN requests r ON r.id = c.first
UNION ALL
SELECT c.purpose, NULL, '', sum(c.n), sum(c.live), sum(c.cached), sum(c.shared), sum(c.abandoned),
	CASE WHEN c.purpose = 'inference' OR count(*) = 1 THEN sum(c.cells)
		ELSE (SELECT count(DISTINCT cell) FROM q WHERE q.purpose = c.purpose) END,
	sum(c.pt), sum(c.ct), sum(c.slot)
FROM counts c GROUP BY c.purpose`

// spansSQL is the interval of each live request of a run that has one (its
// latency up to its end, in microseconds), by purpose in start order:
// what spanUnion needs to sum the wall time of each share and purpose in
// one pass, holding a furthest end per share. (Two SQL windows, one
// partitioned by share and one by purpose, sorted every request twice:
// two thirds of the summary's time.)
const spansSQL = `
SELECT purpose, CASE purpose WHEN 'judge' THEN judge ELSE model END, ended_ms * 1000 - latency_us, ended_ms * 1000
FROM requests
WHERE run_id = ?1 AND purpose IN ('inference', 'judge') AND server NOT IN ('', ?2, ?3)
	AND latency_us > 0 AND ended_ms IS NOT NULL
ORDER BY 1, 3`

// spanUnion sums the length of a union of intervals given in start order:
// each adds what it reaches past the furthest end of those before it.
type spanUnion struct {
	end   int64 // the furthest end so far
	any   bool  // an interval came
	total int64
}

func (u *spanUnion) add(s, e int64) {
	switch {
	case !u.any || u.end <= s:
		u.total += e - s
	case u.end < e:
		u.total += e - u.end
	}
	if !u.any || e > u.end {
		u.end = e
	}
	u.any = true
}

// usageKey names a share (all: its purpose's).
type usageKey struct {
	purpose, key string
	all          bool
}

// RunUsage sums the inference and judge requests of run runID (an exact
// id) after the writes this process has queued: one Usage a tested model
// and a judge, each with a Key, and one a purpose (All), in no
// particular order. Warm-ups and probes belong to neither. The counts and
// the wall times are read in one snapshot of the ledger.
func (l *Ledger) RunUsage(runID string) ([]Usage, error) {
	l.caughtUp("")
	op := "usage of run " + runID
	t, err := l.r.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true, Isolation: l.d.snapshot()})
	if err != nil {
		return nil, l.wrap(op, err)
	}
	defer func() { _ = t.Rollback() }()
	out, err := usageCounts(t, runID)
	if err != nil {
		return nil, l.wrap(op, err)
	}
	walls, err := usageWalls(t, runID)
	if err != nil {
		return nil, l.wrap(op, err)
	}
	for i := range out {
		u := &out[i]
		u.Wall = time.Duration(walls[usageKey{u.Purpose, u.Key, u.All}]) * time.Microsecond
	}
	return out, nil
}

func usageCounts(t tx, runID string) ([]Usage, error) {
	rows, err := t.Query(usageSQL, runID, ServerCache, ServerShared)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Usage
	for rows.Next() {
		var u Usage
		var key *string
		var slot int64
		if err := rows.Scan(&u.Purpose, &key, &u.Model, &u.Requests, &u.Live, &u.Cached, &u.Shared,
			&u.Abandoned, &u.Cells, &u.PromptTokens, &u.CompletionTokens, &slot); err != nil {
			return nil, err
		}
		if key != nil {
			u.Key = *key
		} else {
			u.All = true
		}
		u.Slot = time.Duration(slot) * time.Microsecond
		out = append(out, u)
	}
	return out, rows.Err()
}

// usageWalls is the wall time, in microseconds, of each share and
// purpose: the length of the union of its live requests' intervals.
func usageWalls(t tx, runID string) (map[usageKey]int64, error) {
	rows, err := t.Query(spansSQL, runID, ServerCache, ServerShared)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	unions := map[usageKey]*spanUnion{}
	union := func(k usageKey) *spanUnion {
		u := unions[k]
		if u == nil {
			u = &spanUnion{}
			unions[k] = u
		}
		return u
	}
	var purpose, key string
	var s, e int64
	for rows.Next() {
		if err := rows.Scan(&purpose, &key, &s, &e); err != nil {
			return nil, err
		}
		union(usageKey{purpose: purpose, all: true}).add(s, e)
		union(usageKey{purpose: purpose, key: key}).add(s, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	walls := make(map[usageKey]int64, len(unions))
	for k, u := range unions {
		walls[k] = u.total
	}
	return walls, nil
}
