package ledger

import (
	"database/sql"
	"errors"
)

// op is one write: its statements, run inside the batch's transaction.
type op interface {
	apply(b *batch) error
}

// declined is a write's own "no" (ErrNotOpen, ErrNotFound, ErrHeld,
// ErrTakenOver): it wrote nothing, so its batch goes on.
type declined struct{ err error }

func (d declined) Error() string { return d.err.Error() }
func (d declined) Unwrap() error { return d.err }

// batch is one transaction of the writer.
type batch struct {
	w      *writer
	tx     tx
	stmts  [numStmts]*sql.Stmt
	staged map[textKey]int64 // texts stored in this transaction
	fenced map[string]error  // runs this process held that were taken over (fence.go)
}

func (b *batch) stmt(i int) *sql.Stmt {
	if b.stmts[i] == nil {
		b.stmts[i] = b.tx.Stmt(b.w.l.stmts[i])
	}
	return b.stmts[i]
}

// insertID runs the insert i (one of returnsID) and returns the new
// row's id.
func (b *batch) insertID(i int, args ...any) (int64, error) {
	if b.w.l.d.pg {
		var id int64
		err := b.stmt(i).QueryRow(args...).Scan(&id)
		return id, err
	}
	res, err := b.stmt(i).Exec(args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// commit runs a batch in one transaction and sets each write's err. A
// write that fails is retried alone, and so is every other write of the
// batch, so that one bad write fails by itself.
func (w *writer) commit(qs []queued) {
	l := w.l
	tx, err := l.w.Begin()
	if err != nil {
		for i := range qs {
			qs[i].err = l.wrap("begin a write", err)
		}
		return
	}
	b := batch{w: w, tx: tx}
	if err := b.fence(); err != nil {
		_ = tx.Rollback()
		for i := range qs {
			qs[i].err = err
		}
		return
	}
	for i := range qs {
		if err := b.refused(qs[i].op); err != nil {
			qs[i].err = l.wrap("write", err)
			continue
		}
		err := qs[i].op.apply(&b)
		var d declined
		if errors.As(err, &d) {
			qs[i].err = d.err
			continue
		}
		if err != nil {
			_ = tx.Rollback()
			if len(qs) == 1 {
				qs[0].err = err
				return
			}
			for j := range qs {
				w.commit(qs[j : j+1])
			}
			return
		}
		qs[i].err = nil
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		for i := range qs {
			qs[i].err = l.wrap("commit", err)
		}
		return
	}
	w.commits++
	w.remember(b.staged)
}

// funcOp is a write given as a function of the batch's transaction that
// is no owner's write: a reader closing a run, a take-over. An owner's
// write of its run is a runOp (fence.go).
type funcOp func(b *batch) error

func (f funcOp) apply(b *batch) error { return f(b) }
