package ledger

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// InsertRequest records a request before it is sent and sets r.ID; it
// returns once the row is committed. It stores every field as given (a
// request that never goes out, like a judge cache hit, can be written
// completed at once); an empty Status becomes queued and a zero QueuedAt
// becomes now, both written back to r.
func (l *Ledger) InsertRequest(r *Request) (int64, error) {
	if err := l.InsertRequests([]*Request{r}); err != nil {
		return 0, err
	}
	return r.ID, nil
}

// InsertRequests records requests before they are sent, all in one
// transaction, and sets each one's ID, as InsertRequest does: a whole
// submission is committed with one commit before the fleet sees any of it.
// On an error none of them is written, and their IDs are zero.
func (l *Ledger) InsertRequests(rs []*Request) error {
	if l.wr == nil {
		return l.wrap("insert request", ErrReadOnly)
	}
	for _, r := range rs {
		if err := l.checkInsert(r); err != nil {
			return err
		}
	}
	if len(rs) == 0 {
		return nil
	}
	err := l.wr.do(insertOp{rs})
	if err != nil {
		for _, r := range rs {
			r.ID = 0
		}
	}
	return err
}

// QueueInserts records requests before they are sent, asynchronously: they
// are written in one transaction, each gets its ID, and once that commits
// ack hears nil. Send them only then (from ack's news, posted to the
// sender), so that nothing is sent that the ledger does not hold, while
// the inserts of many submissions share a commit. The rows belong to the
// ledger until ack runs: read or change them only after. On an error none
// of them is written.
func (l *Ledger) QueueInserts(rs []*Request, ack Ack) {
	if l.wr == nil {
		refuseNow(l.wrap("insert request", ErrReadOnly), ack)
		return
	}
	for _, r := range rs {
		if err := l.checkInsert(r); err != nil {
			l.wr.refuse(err, ack)
			return
		}
	}
	l.wr.later(insertOp{rs}, "", ack)
}

// QueueInsert records a request that is never sent (a judge cache hit, an
// answer shared with an identical request): r is copied and written
// completed or failed as given, asynchronously (see Ack). Its id is not
// told: nothing starts or finishes it later.
func (l *Ledger) QueueInsert(r Request, ack Ack) {
	if l.wr == nil {
		refuseNow(l.wrap("insert request", ErrReadOnly), ack)
		return
	}
	if err := l.checkInsert(&r); err != nil {
		l.wr.refuse(err, ack)
		return
	}
	l.wr.later(insertOp{[]*Request{&r}}, cacheKeyOf(&r), ack)
}

func (l *Ledger) checkInsert(r *Request) error {
	if r.Status == "" {
		r.Status = StatusQueued
	}
	if !purposes[r.Purpose] {
		return l.wrap("insert request", fmt.Errorf("unknown purpose %q", r.Purpose))
	}
	if !statuses[r.Status] {
		return l.wrap("insert request", fmt.Errorf("unknown status %q", r.Status))
	}
	if r.QueuedAt.IsZero() {
		r.QueuedAt = time.Now()
	}
	return nil
}

// cacheKeyOf is the cache key whose answer a write of r may change.
func cacheKeyOf(r *Request) string {
	if r.Status != StatusCompleted {
		return ""
	}
	return r.CacheKey
}

type insertOp struct{ rs []*Request }

func (o insertOp) apply(b *batch) error {
	for _, r := range o.rs {
		if pending(r) {
			var in, params []byte
			if err := b.refs([]*[]byte{&in, &params}, r.Input, r.Params); err != nil {
				return b.w.l.wrap("insert request", err)
			}
			if err := b.insertID(stmtInsertPending, named("insert request"), &r.ID, r.RunID, r.Purpose, r.Server, r.Model,
				r.Test, r.Repeat, r.Judge, r.Sample, r.Attempt, b.w.l.keyArg(r.CacheKey), r.BatchID, r.Status,
				msOrNull(r.QueuedAt), r.CandidateModel, r.Round, in, params); err != nil {
				return err
			}
			continue
		}
		var refs [5][]byte
		if err := b.refs([]*[]byte{&refs[0], &refs[1], &refs[2], &refs[3], &refs[4]},
			r.Input, r.Params, r.Output, r.Reasoning, r.ToolCalls); err != nil {
			return b.w.l.wrap("insert request", err)
		}
		err := b.insertID(stmtInsertRequest, named("insert request"), &r.ID, r.RunID, r.Purpose, r.Server, r.Model, r.Test,
			r.Repeat, r.Judge, r.Sample, r.Attempt, b.w.l.keyArg(r.CacheKey), r.BatchID, r.Status, r.Verdict,
			r.ErrorClass, r.Error, r.PromptTokens, r.CompletionTokens, usFromDuration(r.TTFT),
			usFromDuration(r.Latency), msOrNull(r.QueuedAt), msOrNull(r.StartedAt),
			msOrNull(r.EndedAt), r.CandidateModel, r.Round, refs[0], refs[1], refs[2], refs[3], refs[4])
		if err != nil {
			return err
		}
	}
	return nil
}

// pending says r has nothing of an end: every column insertPendingSQL
// leaves out is at its default.
func pending(r *Request) bool {
	return r.Verdict == "" && r.ErrorClass == "" && r.Error == "" && r.PromptTokens == 0 &&
		r.CompletionTokens == 0 && r.TTFT == 0 && r.Latency == 0 && r.StartedAt.IsZero() &&
		r.EndedAt.IsZero() && r.Output == "" && r.Reasoning == "" && r.ToolCalls == ""
}

// StartRequest marks a request running on server and returns once that is
// committed. A request that has already ended (cancelled by CancelOpen,
// say) wraps ErrNotOpen and must not be sent; an unknown id wraps
// ErrNotFound.
func (l *Ledger) StartRequest(id int64, server string, at time.Time) error {
	if l.wr == nil {
		return l.wrap("start request", ErrReadOnly)
	}
	return l.wr.do(startOp{id: id, server: server, at: at})
}

// QueueStart is StartRequest made asynchronously (see Ack): the row of a
// request no longer open is left as it is, and ack hears ErrNotOpen.
func (l *Ledger) QueueStart(id int64, server string, at time.Time, ack Ack) {
	if l.wr == nil {
		refuseNow(l.wrap("start request", ErrReadOnly), ack)
		return
	}
	l.wr.later(startOp{id: id, server: server, at: at}, "", ack)
}

type startOp struct {
	id     int64
	server string
	at     time.Time
	folded bool // written by its request's finish, later in the batch (foldStarts)
}

func (o startOp) apply(b *batch) error {
	if o.folded {
		return nil
	}
	l := b.w.l
	op := requestOp("start request", o.id)
	return b.exec(stmtStartRequest, op, func(n int64) error {
		if n > 0 {
			return nil
		}
		var status string
		err := b.tx.QueryRow(`SELECT status FROM requests WHERE id = ?`, o.id).Scan(&status)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return declined{l.wrap(op.String(), ErrNotFound)}
		case err != nil:
			return l.wrap(op.String(), err)
		}
		return declined{l.wrap(op.String(), fmt.Errorf("%w: it is %s", ErrNotOpen, status))}
	}, o.server, msOrNull(o.at), o.id)
}

// FinishRequest writes a request's end by r.ID: status (completed, error or
// canceled), output, reasoning, tool calls, verdict, error class and
// message, tokens, TTFT, latency and EndedAt (now if zero). Server, BatchID
// and StartedAt are updated only when set. It overwrites an earlier end, so
// a reply that lands after CancelOpen is kept. Once it returns, the row is
// committed: on disk against a crash of the process.
func (l *Ledger) FinishRequest(r *Request) error {
	o, err := l.finishOp(r)
	if err != nil {
		return err
	}
	return l.wr.do(o)
}

// QueueFinish is FinishRequest made asynchronously (see Ack): r is copied
// (EndedAt set first when zero), so the caller may reuse it at once.
func (l *Ledger) QueueFinish(r *Request, ack Ack) {
	o, err := l.finishOp(r)
	switch {
	case l.wr == nil:
		refuseNow(err, ack)
	case err != nil:
		l.wr.refuse(err, ack)
	default:
		l.wr.later(o, cacheKeyOf(r), ack)
	}
}

func (l *Ledger) finishOp(r *Request) (finishOp, error) {
	op := requestOp("finish request", r.ID)
	if l.wr == nil {
		return finishOp{}, l.wrap(op.String(), ErrReadOnly)
	}
	if !terminal[r.Status] {
		return finishOp{}, l.wrap(op.String(), fmt.Errorf("status %q is not an end (completed, error, canceled)", r.Status))
	}
	if r.EndedAt.IsZero() {
		r.EndedAt = time.Now()
	}
	return finishOp{r: *r}, nil
}

type finishOp struct {
	r     Request
	start *startOp // the request's start, folded into this write (foldStarts)
}

func (o finishOp) apply(b *batch) error {
	l, r := b.w.l, &o.r
	op := requestOp("finish request", r.ID)
	var out, reasoning, calls []byte
	if err := b.refs([]*[]byte{&out, &reasoning, &calls}, r.Output, r.Reasoning, r.ToolCalls); err != nil {
		return l.wrap(op.String(), err)
	}
	check := func(n int64) error {
		if n == 0 {
			return declined{l.wrap(op.String(), ErrNotFound)}
		}
		return nil
	}
	args := []any{r.Status, out, reasoning, calls, r.Verdict,
		r.ErrorClass, r.Error, r.PromptTokens, r.CompletionTokens,
		usFromDuration(r.TTFT), usFromDuration(r.Latency), msOrNull(r.EndedAt),
		r.Server, r.BatchID, msOrNull(r.StartedAt), r.ID}
	if s := o.start; s != nil {
		return b.exec(stmtFinishStarted, op, check, append(args, s.server, msOrNull(s.at))...)
	}
	return b.exec(stmtFinishRequest, op, check, args...)
}

// foldStarts writes each start whose request finishes later in the same
// batch with that finish, in one statement instead of two: a request that
// answers within FlushEvery of its dispatch (a short reply, a fast server)
// is one UPDATE of its row. The row ends as the two statements would leave
// it (finishStartedSQL). Nothing folds across a write off the hot path
// (queues: a CancelOpen, a take-over), which may close the request between
// the two. The start's Ack hears nil: what the one statement cannot tell
// is a start that would have declined, on a request already closed (the
// runner calls CancelOpen only after Flush, at a run's end; a take-over
// is refused whole by the batch's fence) or unknown (its finish declines
// too).
func foldStarts(qs []queued) {
	var next map[int64]int // request id → the index of its next finish
	for i := len(qs) - 1; i >= 0; i-- {
		switch o := qs[i].op.(type) {
		case finishOp:
			if o.start == nil {
				if next == nil {
					next = map[int64]int{}
				}
				next[o.r.ID] = i
			}
		case startOp:
			j, ok := next[o.id]
			if !ok || o.folded {
				continue
			}
			f := qs[j].op.(finishOp)
			if f.start != nil {
				continue // two starts before one finish: the first is written as it comes
			}
			start := o
			f.start = &start
			qs[j].op = f
			o.folded = true
			qs[i].op = o
		default:
			if !queues(o) {
				next = nil // a write that may close the request: no fold across it
			}
		}
	}
}

// unfold undoes foldStarts, so that a batch that failed is retried write
// by write as it was queued: a start whose finish fails by itself is still
// written.
func unfold(qs []queued) {
	for i := range qs {
		switch o := qs[i].op.(type) {
		case startOp:
			o.folded = false
			qs[i].op = o
		case finishOp:
			o.start = nil
			qs[i].op = o
		}
	}
}

// refuseNow tells ack of a write refused on a ledger without a writer.
func refuseNow(err error, ack Ack) {
	if ack != nil {
		ack(err)
	}
}
