package ledger

import (
	"fmt"
	"time"
)

// Later writes without waiting for the disk: each write is queued and
// committed with others at most FlushEvery later (or sooner, with the next
// write that waits, or once FlushRows rows are queued), and done hears how
// it went: nil once the row is on disk, or the error. done is called from
// the goroutine that committed the batch, or at once for a write refused
// before it is queued (a read-only ledger, a status that is not an end); it
// must not wait on the caller of the Later method. A nil done ignores the
// outcome.
//
// Writes keep their order with every other write of the ledger: a row
// inserted by InsertRequest is there for a Later FinishRequest of it, and
// once FinishRun (or Flush) returns, every Later write made before it has
// been committed or has failed. A crash loses what was not yet committed:
// see docs/architecture.md, "The ledger".
//
// The engine writes this way what may be lost in a crash without losing
// anything that was sent unknown: a request's start and end, a cell's
// state, a verdict. A request is inserted with InsertRequest(s), which
// waits, before it is sent.
type Later struct {
	l    *Ledger
	done func(error)
}

// Later returns the ledger's lazy writes, reporting to done.
func (l *Ledger) Later(done func(error)) Later { return Later{l: l, done: done} }

func (w Later) queue(o *op, err error) {
	if err == nil {
		_, err = w.l.writer(o.name)
	}
	if err != nil {
		if w.done != nil {
			w.done(err)
		}
		return
	}
	o.done = w.done
	w.l.wr.later(o)
}

// InsertRequest is Ledger.InsertRequest, queued, for a request that is
// never sent and that no later write names: one answered from a cache or
// by an identical request, written complete. r is checked and its Status
// and QueuedAt defaults filled in at once; its ID is not set.
func (w Later) InsertRequest(r *Request) {
	if err := w.l.checkInsert([]*Request{r}, time.Now()); err != nil {
		w.queue(&op{name: "insert request"}, err)
		return
	}
	c := *r
	w.queue(&op{name: "insert request", rows: 1, run: func(b *batch) error {
		if _, err := b.insertRequest(&c); err != nil {
			return w.l.wrap("insert request", err)
		}
		return nil
	}}, nil)
}

// StartRequest is Ledger.StartRequest, queued.
func (w Later) StartRequest(id int64, server string, at time.Time) {
	w.queue(w.l.startOp(id, server, at), nil)
}

// FinishRequest is Ledger.FinishRequest, queued: it checks r and fills in
// a zero EndedAt at once, then writes a copy of r.
func (w Later) FinishRequest(r *Request) {
	o, err := w.l.finishOp(r)
	if err != nil {
		o = &op{name: fmt.Sprintf("finish request %d", r.ID)}
	}
	w.queue(o, err)
}

// PutCell is Ledger.PutCell, queued.
func (w Later) PutCell(c CellRow) {
	w.queue(w.l.cellsOp([]CellRow{c}), nil)
}

// PutVerdict is Ledger.PutVerdict, queued.
func (w Later) PutVerdict(v VerdictRow) {
	w.queue(w.l.verdictOp(v), nil)
}
