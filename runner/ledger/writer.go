package ledger

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// The writer: every write of a Ledger is queued, in the order it is made,
// and the queue is committed in batches, one transaction each (group
// commit), so the writes of many cells share a commit. A batch is
// committed
//
//   - at once when someone waits on it: a synchronous write (InsertRequest,
//     CreateRun, Heartbeat...), Flush, a reader catching up, Close, or an
//     asynchronous write that finds the queue full;
//   - once flushWrites writes are queued;
//   - otherwise FlushEvery after the oldest queued write was queued.
//
// One commit runs at a time. Whoever waits on a commit makes it, if no
// other is under way: a caller alone with the ledger pays no hand-off to
// another goroutine. The writer's own goroutine makes the commits that no
// one waits on (the timed ones, and those of flushWrites).
//
// A synchronous write returns once its batch has committed. An
// asynchronous one (QueueStart, QueueFinish, QueueCell, QueueVerdict,
// QueueInsert) returns at once; its Ack hears how it ended. A write that
// fails (a statement error) does not take the others of its batch down: the
// batch is rolled back and each write is tried again in a transaction of
// its own. A write that declines (a start of a request no longer open, an
// end of an unknown one) writes nothing and leaves the batch as it is.

// FlushEvery bounds how long an asynchronous write waits for its commit,
// and so what a crash of the process can lose of the writes not yet
// acknowledged (docs/architecture.md, "The ledger").
const FlushEvery = 10 * time.Millisecond

// flushWrites queued writes commit without waiting for FlushEvery.
const flushWrites = 512

// maxQueued asynchronous writes make the next one wait for a commit, so
// that a stalled disk bounds the queue instead of memory.
const maxQueued = 4096

// maxFailures bounds the failures kept for Flush; past it they are counted.
const maxFailures = 8

// errClosed: a write on a closed ledger.
var errClosed = errors.New("ledger is closed")

// Ack hears how an asynchronous write ended: nil once the transaction that
// holds it has committed (the write is acknowledged: a crash of the process
// can no longer lose it), or the error that kept it out of the ledger. It
// runs once, on the goroutine that made the commit (the writer's, or one
// that waited on a synchronous write, a Flush or a read), or, for a write
// refused at once, on the caller's before the call returns. It must not
// block, and must not call the Ledger: post the outcome somewhere and
// return.
type Ack func(error)

type queued struct {
	op  op
	ack Ack
	res *error // where a synchronous write's caller waits for its error; nil if asynchronous
	key string // the cache key whose newest answer this write may change
	err error
}

type writer struct {
	l *Ledger

	mu      sync.Mutex
	cond    *sync.Cond // a batch finished
	queue   []queued
	spare   []queued
	seq     uint64 // writes queued so far
	done    uint64 // writes finished so far (committed, failed or declined)
	acked   uint64 // of those, the ones whose Ack has run (or that have none)
	busy    bool   // a commit is under way
	idle    bool   // the writer's goroutine waits for a wake, with no timer
	urgent  bool   // someone waits: commit now
	oldest  time.Time
	closing bool
	keys    map[string]int     // cache keys of queued writes
	cells   map[cellID]*cellOp // the newest queued write of each cell
	recent  recentCells        // cells committed lately
	failed  []error            // asynchronous failures Flush has not returned yet
	more    int                // failures past maxFailures

	kick   chan struct{}
	exited chan struct{}
	// stop is closed by close, at closedAt: a writer reconnecting
	// (reconnect.go) gives up sooner. lostAt is when the connection went,
	// while the writer makes it again (zero otherwise).
	stop     chan struct{}
	closedAt time.Time
	lostAt   time.Time

	recalled map[textKey]int64 // pieces readers read back, for the committer to remember

	// The committer's own: only the goroutine making a commit (busy)
	// touches them.
	known   map[textKey]int64 // pieces stored, the newer generation
	older   map[textKey]int64
	hashBuf []byte
	freeIDs []int64 // ids of pieces taken from the sequence, not yet used (PostgreSQL)
	commits int     // transactions committed
}

func newWriter(l *Ledger) *writer {
	w := &writer{l: l, keys: map[string]int{}, cells: map[cellID]*cellOp{}, known: map[textKey]int64{},
		kick: make(chan struct{}, 1), exited: make(chan struct{}), stop: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// wake has the writer's goroutine look at the queue again.
func (w *writer) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// push queues q; called with w.mu held.
func (w *writer) push(q queued) {
	if len(w.queue) == 0 {
		w.oldest = time.Now()
	}
	w.queue = append(w.queue, q)
	w.seq++
	if q.key != "" {
		w.keys[q.key]++
	}
	if c, ok := q.op.(*cellOp); ok {
		w.cells[c.id()] = c
	}
}

// due says whether the queue should be committed now; called with w.mu held.
func (w *writer) due() bool {
	return len(w.queue) > 0 && (w.urgent || w.closing || len(w.queue) >= flushWrites ||
		!time.Now().Before(w.oldest.Add(FlushEvery)))
}

// await returns once the writes numbered up to seq have finished, making
// the commits itself while no one else is; called with w.mu held.
func (w *writer) await(seq uint64) {
	for w.done < seq {
		if w.busy {
			w.cond.Wait()
			continue
		}
		w.urgent = true
		w.commitDue()
	}
}

// commitDue commits the queue, batch after batch, while it is due and no
// other commit is under way; called with w.mu held, which it releases
// while committing.
func (w *writer) commitDue() {
	for !w.busy && w.due() {
		qs := w.queue
		w.queue, w.spare = w.spare, nil
		w.urgent = false
		w.busy = true
		recalled := w.recalled
		w.recalled = nil
		w.mu.Unlock()

		w.remember(recalled)
		w.commit(qs)

		w.mu.Lock()
		w.busy = false
		w.done += uint64(len(qs))
		for i := range qs {
			q := &qs[i]
			if q.key != "" {
				if w.keys[q.key]--; w.keys[q.key] <= 0 {
					delete(w.keys, q.key)
				}
			}
			if c, ok := q.op.(*cellOp); ok {
				if w.cells[c.id()] == c {
					delete(w.cells, c.id())
				}
				if q.err == nil {
					w.recent.put(c)
				}
			}
			switch {
			case q.res != nil:
				*q.res = q.err
			case q.err != nil:
				w.fail(q.err)
			}
		}
		w.cond.Broadcast()
		w.mu.Unlock()
		for i := range qs {
			if q := &qs[i]; q.res == nil && q.ack != nil {
				q.ack(q.err)
			}
		}
		clear(qs)
		w.mu.Lock()
		w.acked += uint64(len(qs))
		w.cond.Broadcast()
		if w.spare == nil {
			w.spare = qs[:0]
		}
	}
	if w.idle && (len(w.queue) > 0 || w.closing) {
		w.wake() // what is left is timed by the writer's goroutine
	}
}

// do queues a synchronous write and returns its error once its batch has
// finished.
func (w *writer) do(o op) error {
	var res error
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return errClosed
	}
	w.push(queued{op: o, res: &res})
	w.await(w.seq)
	return res
}

// later queues an asynchronous write.
func (w *writer) later(o op, key string, ack Ack) {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		w.refuse(errClosed, ack)
		return
	}
	if len(w.queue) >= maxQueued {
		w.await(w.seq) // the disk is behind: wait, so the queue stays bounded
	}
	w.push(queued{op: o, ack: ack, key: key})
	// The writer's goroutine times the oldest write; one that sleeps on a
	// timer set for an older one wakes early and sets it again.
	if n := len(w.queue); (n == 1 && w.idle) || n == flushWrites {
		w.wake()
	}
	w.mu.Unlock()
}

// refuse ends an asynchronous write that was never queued.
func (w *writer) refuse(err error, ack Ack) {
	w.mu.Lock()
	w.fail(err)
	w.mu.Unlock()
	if ack != nil {
		ack(err)
	}
}

// fail keeps an asynchronous failure for Flush; called with w.mu held.
func (w *writer) fail(err error) {
	if len(w.failed) < maxFailures {
		w.failed = append(w.failed, err)
	} else {
		w.more++
	}
}

// wait returns once every write queued before the call has finished; with
// a key, only if a queued write may change that key's answer.
func (w *writer) wait(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if key != "" && w.keys[key] == 0 {
		return
	}
	w.await(w.seq)
}

// cellID names a cell of a run.
type cellID struct {
	run string
	CellKey
}

func (o *cellOp) id() cellID {
	return cellID{o.c.RunID, CellKey{o.c.Model, o.c.Test, o.c.Repeat}}
}

// queuedCell is the newest write of a cell by this writer still queued,
// being committed or committed lately: what the ledger holds of it, or
// will once it commits.
func (w *writer) queuedCell(k CellKey, run string) (CellRow, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := cellID{run, k}
	if c, ok := w.cells[id]; ok {
		return c.c, true
	}
	return w.recent.get(id)
}

// recentCellBytes bounds what the writer keeps of the cells it committed,
// texts and bookkeeping: two generations of half as much each.
//
// It is for pipelined judging, which reads a cell back within a second or
// so of its commit: 2 MB holds thousands of cells.
var recentCellBytes = 2 << 20 // a variable for the tests

// recentCells is what the writer remembers of the cells it committed
// lately, so that a run reading back a cell it has just written (to judge
// its whole reply, which its live state keeps only a preview of) finds it
// without a query.
type recentCells struct {
	young, old map[cellID]*cellOp
	bytes      int
}

func (r *recentCells) put(c *cellOp) {
	if c.c.Output == "" && c.c.ToolCalls == "" {
		// Nothing to judge (a cell put pending as its run starts, an
		// error): a reader may as well query it, and a large run's
		// pending cells would fill the memory with rows no one reads back.
		return
	}
	size := len(c.c.Output) + len(c.c.Reasoning) + len(c.c.ToolCalls) + len(c.c.Checks) + recentCellOverhead
	if r.young == nil || r.bytes+size > recentCellBytes/2 {
		r.old, r.young, r.bytes = r.young, map[cellID]*cellOp{}, 0
	}
	r.young[c.id()] = c
	r.bytes += size
}

// recentCellOverhead is what a remembered cell costs beside its texts: its
// row and its entry in the map.
const recentCellOverhead = int(unsafe.Sizeof(cellOp{})) + 64

func (r *recentCells) get(id cellID) (CellRow, bool) {
	if c, ok := r.young[id]; ok {
		return c.c, true
	}
	if c, ok := r.old[id]; ok {
		return c.c, true
	}
	return CellRow{}, false
}

// flush waits like wait and returns the asynchronous failures not yet
// returned.
func (w *writer) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	seq := w.seq
	w.await(seq)
	for w.acked < seq {
		w.cond.Wait() // their Acks are running on the goroutine that committed them
	}
	errs, more := w.failed, w.more
	w.failed, w.more = nil, 0
	if more > 0 {
		errs = append(errs, fmt.Errorf("and %d more failed writes", more))
	}
	return errors.Join(errs...)
}

// close commits what is queued, stops the writer's goroutine and returns
// what flush would. Writes after it fail with errClosed.
func (w *writer) close() error {
	w.mu.Lock()
	if !w.closing {
		w.closing, w.closedAt = true, time.Now()
		close(w.stop)
	}
	w.mu.Unlock()
	w.wake()
	<-w.exited
	return w.flush()
}

// run is the writer's goroutine: it commits the queue when it is due and
// no one waiting on it has.
func (w *writer) run() {
	defer close(w.exited)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		w.mu.Lock()
		w.commitDue()
		if w.closing && len(w.queue) == 0 && !w.busy {
			w.mu.Unlock()
			return
		}
		wait := time.Duration(-1)
		if len(w.queue) > 0 && !w.busy {
			wait = time.Until(w.oldest.Add(FlushEvery))
		}
		w.idle = wait < 0
		w.mu.Unlock()
		if wait < 0 {
			<-w.kick
			w.mu.Lock()
			w.idle = false
			w.mu.Unlock()
			continue
		}
		timer.Reset(wait)
		select {
		case <-w.kick:
		case <-timer.C:
		}
		timer.Stop()
	}
}
