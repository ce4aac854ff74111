package ledger

import (
	"database/sql"
	"errors"
	"slices"
	"sync"
	"time"
)

// The writer: every write of a Ledger is an op on one queue, and ops are
// committed in batches, in the order they were queued, one transaction
// per batch (group commit). A batch is committed
//
//   - at once when a caller waits on an op in the queue (every method but
//     the Later ones): its commit carries whatever was queued before it, so
//     callers that write at the same time share one commit;
//   - FlushEvery after the oldest lazy op (Later) was queued, or as soon as
//     FlushRows rows are queued, when only lazy ops wait.
//
// Whoever finds the queue due and no commit in progress commits it (the
// waiting caller itself, or the timer), so a lone caller pays no hand-off
// to another goroutine. A lazy op's done func hears how it went once its
// batch has committed or failed. Lazy ops past flushBacklog rows make
// their caller wait for a commit, so a stalled disk bounds the queue.

// FlushEvery bounds how long a lazy write waits for its commit, and so
// what a crash can lose of them (docs/architecture.md, "The ledger").
const FlushEvery = 20 * time.Millisecond

// FlushRows is the number of queued rows that commits at once.
const FlushRows = 1000

const flushBacklog = 8 * FlushRows

// errClosed: a write on a closed ledger.
var errClosed = errors.New("ledger is closed")

// op is one write: run makes its statements inside the batch transaction.
// An atomic op's statements stand or fall together (a savepoint).
type op struct {
	name   string
	rows   int
	atomic bool
	run    func(b *batch) error

	lazy   bool
	queued time.Time
	done   func(error) // lazy ops: told the outcome; may be nil

	finished bool // under writer.mu
	err      error
}

type writer struct {
	l *Ledger

	mu     sync.Mutex
	cond   *sync.Cond // a batch finished
	queue  []*op
	rows   int
	busy   bool // a batch is being committed
	closed bool
	timer  *time.Timer
	armed  bool // the timer is set, or its tick has not run yet
	kicked bool // a tick goroutine is on its way

	pack    packer // used by whoever commits (busy)
	commits int    // transactions committed or tried: for tests
}

func newWriter(l *Ledger) *writer {
	w := &writer{l: l}
	w.cond = sync.NewCond(&w.mu)
	w.timer = time.AfterFunc(time.Hour, w.tick)
	w.timer.Stop()
	return w
}

// do queues o and waits for its commit.
func (w *writer) do(o *op) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.l.wrap(o.name, errClosed)
	}
	w.push(o)
	w.drive(o)
	err := o.err
	w.mu.Unlock()
	return err
}

// later queues a lazy op.
func (w *writer) later(o *op) {
	o.lazy = true
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		if o.done != nil {
			o.done(w.l.wrap(o.name, errClosed))
		}
		return
	}
	o.queued = time.Now()
	w.push(o)
	if w.rows >= flushBacklog {
		w.drive(o) // the disk is behind: wait, so the queue stays bounded
	} else if w.rows >= FlushRows && !w.busy {
		w.kick()
	} else if !w.armed {
		w.armed = true
		w.timer.Reset(FlushEvery)
	}
	w.mu.Unlock()
}

func (w *writer) push(o *op) {
	w.queue = append(w.queue, o)
	w.rows += max(o.rows, 1)
}

// pending reports whether any write is queued or being committed.
func (w *writer) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) > 0 || w.busy
}

// flush waits until everything queued before it has been committed (or
// has failed).
func (w *writer) flush() error {
	return w.do(&op{name: "flush", rows: 0})
}

// tick is the timer's and the backlog's way in: commit what is due.
func (w *writer) tick() {
	w.mu.Lock()
	w.armed, w.kicked = false, false
	w.drive(nil)
	w.mu.Unlock()
}

// kick has a goroutine of its own commit what is due, so that the caller
// does not wait. Called with w.mu held.
func (w *writer) kick() {
	if !w.kicked {
		w.kicked = true
		go w.tick()
	}
}

// drive commits batches while the queue is due and nobody else is
// committing, until want (if any) has finished. Called with w.mu held.
func (w *writer) drive(want *op) {
	for want == nil || !want.finished {
		if w.busy {
			if want == nil {
				return // the committer will see what is due
			}
			w.cond.Wait()
			continue
		}
		if !w.due(want != nil) {
			w.rearm()
			return
		}
		batch := w.take()
		w.busy = true
		w.mu.Unlock()
		tried := w.commit(batch)
		w.mu.Lock()
		if tried {
			w.commits++
		}
		w.busy = false
		for _, o := range batch {
			o.finished = true
		}
		w.cond.Broadcast()
		if hasDone(batch) {
			w.mu.Unlock()
			for _, o := range batch {
				if o.lazy && o.done != nil {
					o.done(o.err)
				}
			}
			w.mu.Lock()
		}
	}
	if !w.busy && w.due(false) {
		// What queued meanwhile is due too; the timer may not come soon.
		w.kick()
		return
	}
	w.rearm()
}

func hasDone(batch []*op) bool {
	for _, o := range batch {
		if o.lazy && o.done != nil {
			return true
		}
	}
	return false
}

// due reports whether the queue should be committed now: someone waits on
// it (waiting), an op in it is not lazy, it holds FlushRows rows, or its
// oldest lazy op has waited FlushEvery.
func (w *writer) due(waiting bool) bool {
	if len(w.queue) == 0 {
		return false
	}
	if waiting || w.rows >= FlushRows || w.closed {
		return true
	}
	for _, o := range w.queue {
		if !o.lazy {
			return true
		}
	}
	return time.Since(w.queue[0].queued) >= FlushEvery
}

// rearm sets the timer for the oldest lazy op still queued.
func (w *writer) rearm() {
	if len(w.queue) == 0 || w.armed {
		return
	}
	w.armed = true
	w.timer.Reset(max(FlushEvery-time.Since(w.queue[0].queued), 0))
}

// take removes the next batch from the queue: whole ops, up to about
// FlushRows rows (an op bigger than that goes alone).
func (w *writer) take() []*op {
	n, rows := 0, 0
	for n < len(w.queue) && (n == 0 || rows+max(w.queue[n].rows, 1) <= FlushRows) {
		rows += max(w.queue[n].rows, 1)
		n++
	}
	batch := make([]*op, n)
	copy(batch, w.queue[:n])
	clear(w.queue[:n])
	w.queue = w.queue[n:]
	if len(w.queue) == 0 {
		w.queue = nil
	}
	w.rows -= rows
	return batch
}

// batch is the transaction a batch of ops writes in.
type batch struct {
	l     *Ledger
	tx    *sql.Tx
	stmts map[*sql.Stmt]*sql.Stmt
	// known are the text hashes this batch has written or found written;
	// they join the ledger's set once it commits.
	known map[textHash]bool
}

// stmt is s bound to the batch's transaction, prepared once per batch.
func (b *batch) stmt(s *sql.Stmt) *sql.Stmt {
	if ts, ok := b.stmts[s]; ok {
		return ts
	}
	ts := b.tx.Stmt(s)
	b.stmts[s] = ts
	return ts
}

// text stores what s needs in the texts table and returns its column value.
func (b *batch) text(s string) (any, error) {
	st := encodeText(s)
	for i, h := range st.hashes {
		if b.known[h] {
			continue
		}
		if _, ok := b.l.known.get(h); ok {
			continue
		}
		if _, err := b.stmt(b.l.insertText).Exec(h[:], b.l.wr.pack.packBody(st.pieces[i])); err != nil {
			return nil, err
		}
		b.known[h] = true
	}
	return st.value, nil
}

// commit runs a batch in one transaction and records each op's outcome.
// It reports whether there was anything to commit.
func (w *writer) commit(ops []*op) bool {
	l := w.l
	if !slices.ContainsFunc(ops, func(o *op) bool { return o.run != nil }) {
		return false // flushes with nothing before them
	}
	fail := func(err error) {
		for _, o := range ops {
			if o.err == nil {
				o.err = l.wrap(o.name, err)
			}
		}
	}
	tx, err := l.w.Begin()
	if err != nil {
		fail(err)
		return true
	}
	b := &batch{l: l, tx: tx, stmts: map[*sql.Stmt]*sql.Stmt{}, known: map[textHash]bool{}}
	for _, o := range ops {
		if o.run == nil {
			continue
		}
		if o.atomic {
			o.err = b.atomic(o)
		} else {
			o.err = o.run(b)
		}
	}
	for _, ts := range b.stmts {
		ts.Close()
	}
	if err := tx.Commit(); err != nil {
		fail(err)
		return true
	}
	for h := range b.known {
		l.known.put(h, "")
	}
	return true
}

// atomic runs o inside a savepoint, so that a failure undoes all of it and
// nothing else of the batch.
func (b *batch) atomic(o *op) error {
	if _, err := b.tx.Exec(`SAVEPOINT op`); err != nil {
		return err
	}
	known := b.known
	b.known = map[textHash]bool{}
	err := o.run(b)
	if err != nil {
		b.known = known
		if _, rerr := b.tx.Exec(`ROLLBACK TO op`); rerr != nil {
			return errors.Join(err, rerr)
		}
	} else {
		for h := range b.known {
			known[h] = true
		}
		b.known = known
	}
	if _, rerr := b.tx.Exec(`RELEASE op`); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// close commits what is queued and refuses writes from then on.
func (w *writer) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	w.timer.Stop()
	last := &op{name: "close"}
	w.push(last)
	w.drive(last)
}
