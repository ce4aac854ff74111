package ledger

import (
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

// usageSQL sums a run's inference and judge requests by share: one row a
// tested model or judge, then one a purpose (key NULL). A request's
// interval is its latency up to its end; the wall time of a share is the
// length of the union of its intervals: taken in start order, each adds
// what it reaches past the furthest end of those before it. A share's model
// is its first request's. A cell is a (tested model, test, repeat): a judge
// request's is its candidate's. The text is plain SQL that SQLite and
// PostgreSQL read alike (no booleans summed, no bare columns beside an
// aggregate, no two-argument max), so the dialect passes it through. q
// is read more than once but NOT MATERIALIZED: scanned again, it costs a
// little CPU once a run; kept, it costs SQLite 8 MB at the end of a run of
// 100,000 judged cells, which its allocator then keeps. reach, whose two
// windows sort every request, is read once: byshare sums a purpose's wall
// time beside each share's, and the purpose's row adds those up (half the
// query's time, where reach was read twice). A purpose's cells are its
// shares' cells added up where no two shares can hold one cell: inference
// (a share is a tested model, part of its cells' names) or a purpose with
// one share (one judge); only judging by several judges counts them again
// (a scan of every request, a third of the query's time otherwise).
const usageSQL = `
WITH q AS NOT MATERIALIZED (
	SELECT id, purpose, CASE purpose WHEN 'judge' THEN judge ELSE model END AS k, server,
		CASE WHEN server NOT IN ('', ?2, ?3) THEN 1 ELSE 0 END AS live,
		CASE WHEN candidate_model <> '' THEN candidate_model ELSE model END || ' ' || test || ' ' || repeat AS cell,
		prompt_tokens, completion_tokens, latency_us, ended_ms
	FROM requests WHERE run_id = ?1 AND purpose IN ('inference', 'judge')
),
spans AS (
	SELECT purpose, k, ended_ms * 1000 - latency_us AS s, ended_ms * 1000 AS e
	FROM q WHERE live = 1 AND latency_us > 0 AND ended_ms IS NOT NULL
),
reach AS (
	SELECT purpose, k, s, e,
		max(e) OVER (PARTITION BY purpose, k ORDER BY s ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS kbefore,
		max(e) OVER (PARTITION BY purpose ORDER BY s ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pbefore
	FROM spans
),
byshare AS (
	SELECT purpose, k,
		sum(CASE WHEN kbefore IS NULL OR kbefore < s THEN e - s WHEN kbefore < e THEN e - kbefore ELSE 0 END) AS wall,
		sum(CASE WHEN pbefore IS NULL OR pbefore < s THEN e - s WHEN pbefore < e THEN e - pbefore ELSE 0 END) AS pwall
	FROM reach GROUP BY purpose, k
),
counts AS (
	SELECT purpose, k, min(id) AS first, count(*) AS n, sum(live) AS live,
		sum(CASE WHEN server = ?2 THEN 1 ELSE 0 END) AS cached, sum(CASE WHEN server = ?3 THEN 1 ELSE 0 END) AS shared,
		sum(CASE WHEN server = '' THEN 1 ELSE 0 END) AS abandoned, count(DISTINCT cell) AS cells,
		sum(live * prompt_tokens) AS pt, sum(live * completion_tokens) AS ct, sum(live * latency_us) AS slot
	FROM q GROUP BY purpose, k
)
SELECT c.purpose, c.k, r.model, c.n, c.live, c.cached, c.shared, c.abandoned, c.cells, c.pt, c.ct, c.slot, coalesce(w.wall, 0)
FROM counts c JOIN requests r ON r.id = c.first LEFT JOIN byshare w ON w.purpose = c.purpose AND w.k = c.k
UNION ALL
SELECT c.purpose, NULL, '', sum(c.n), sum(c.live), sum(c.cached), sum(c.shared), sum(c.abandoned),
	CASE WHEN c.purpose = 'inference' OR count(*) = 1 THEN sum(c.cells)
		ELSE (SELECT count(DISTINCT cell) FROM q WHERE q.purpose = c.purpose) END,
	sum(c.pt), sum(c.ct), sum(c.slot),
	coalesce((SELECT sum(pwall) FROM byshare w WHERE w.purpose = c.purpose), 0)
FROM counts c GROUP BY c.purpose`

// RunUsage sums the inference and judge requests of run runID (an exact
// id) after the writes this process has queued: one Usage a tested model
// and a judge, each with a Key, and one a purpose (All), in no
// particular order. Warm-ups and probes belong to neither.
func (l *Ledger) RunUsage(runID string) ([]Usage, error) {
	l.caughtUp("")
	op := "usage of run " + runID
	rows, err := l.r.Query(usageSQL, runID, ServerCache, ServerShared)
	if err != nil {
		return nil, l.wrap(op, err)
	}
	defer rows.Close()
	var out []Usage
	for rows.Next() {
		var u Usage
		var key *string
		var slot, wall int64
		if err := rows.Scan(&u.Purpose, &key, &u.Model, &u.Requests, &u.Live, &u.Cached, &u.Shared,
			&u.Abandoned, &u.Cells, &u.PromptTokens, &u.CompletionTokens, &slot, &wall); err != nil {
			return nil, l.wrap(op, err)
		}
		if key != nil {
			u.Key = *key
		} else {
			u.All = true
		}
		u.Slot, u.Wall = time.Duration(slot)*time.Microsecond, time.Duration(wall)*time.Microsecond
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap(op, err)
	}
	return out, nil
}
