package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// opName names a write in its errors ("finish request 12", "put cell
// run/model/test#0"); its text is made only when an error is: a batch
// applies thousands of writes that make none.
type opName struct {
	what   string
	of     opOf
	id     int64  // a request's
	run    string // a cell's, with model, test, repeat (and judge: a verdict's)
	model  string
	test   string
	repeat int
	judge  string
}

// opOf is what an opName names besides its text.
type opOf uint8

const (
	ofNothing opOf = iota
	ofRequest      // "what id"
	ofCell         // "what run/model/test#repeat"
	ofVerdict      // "what run/model/test#repeat by judge"
)

// named is an opName that is its text alone.
func named(what string) opName { return opName{what: what} }

// requestOp names a write of request id.
func requestOp(what string, id int64) opName { return opName{what: what, of: ofRequest, id: id} }

func (o opName) String() string {
	switch o.of {
	case ofRequest:
		return fmt.Sprintf("%s %d", o.what, o.id)
	case ofCell:
		return fmt.Sprintf("%s %s/%s/%s#%d", o.what, o.run, o.model, o.test, o.repeat)
	case ofVerdict:
		return fmt.Sprintf("%s %s/%s/%s#%d by %s", o.what, o.run, o.model, o.test, o.repeat, o.judge)
	}
	return o.what
}

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
	fenceQ *sql.Stmt         // the ledger's fenceStmt in tx (SQLite)
	staged map[textKey]int64 // texts stored in this transaction
	fenced map[string]error  // runs this process held that were taken over (fence.go)

	// PostgreSQL: the writer's statements (exec, insertID) are queued and
	// go to the server together, in one round trip (send), rather than one
	// round trip each; what they tell (an id, the rows changed) is known
	// once sent.
	conn     *sql.Conn // the connection tx is on
	queue    []pgStmt
	at       int           // the write of the batch being applied
	declines map[int]error // writes that declined once their statements were sent
	xid, pid int64         // the transaction's id and server process (txid)
}

// pgStmt is a statement queued on PostgreSQL.
type pgStmt struct {
	write int // the write of the batch that queued it
	i     int // which of the writer's statements
	args  []any
	op    opName
	id    *int64              // where a RETURNING id goes
	check func(n int64) error // sees the rows it changed, once sent
}

func (b *batch) stmt(i int) *sql.Stmt {
	if b.stmts[i] == nil {
		b.stmts[i] = b.tx.Stmt(b.w.l.stmts[i])
	}
	return b.stmts[i]
}

// insertID runs the insert i (one of returnsID) and sets *id to the new
// row's id: at once on SQLite; on PostgreSQL once the batch is sent.
func (b *batch) insertID(i int, op opName, id *int64, args ...any) error {
	if b.w.l.d.pg {
		b.queue = append(b.queue, pgStmt{write: b.at, i: i, args: args, op: op, id: id})
		return nil
	}
	res, err := b.stmt(i).Exec(args...)
	if err != nil {
		return b.w.l.wrap(op.String(), err)
	}
	if *id, err = res.LastInsertId(); err != nil {
		return b.w.l.wrap(op.String(), err)
	}
	return nil
}

// exec runs statement i and hands check (if any) the number of rows it
// changed: at once on SQLite; on PostgreSQL once the batch is sent. A
// check's declined makes its write decline.
func (b *batch) exec(i int, op opName, check func(n int64) error, args ...any) error {
	if b.w.l.d.pg {
		b.queue = append(b.queue, pgStmt{write: b.at, i: i, args: args, op: op, check: check})
		return nil
	}
	res, err := b.stmt(i).Exec(args...)
	if err != nil {
		return b.w.l.wrap(op.String(), err)
	}
	if check == nil {
		return nil
	}
	n, err := res.RowsAffected()
	if err != nil {
		return b.w.l.wrap(op.String(), err)
	}
	return check(n)
}

// send sends the statements queued on PostgreSQL in one round trip (a
// pipeline), then runs their checks. An error is a statement's failure,
// which aborts the transaction; a check's declined is kept for its write
// in declines.
func (b *batch) send() error {
	if len(b.queue) == 0 {
		return nil
	}
	l := b.w.l
	q := b.queue
	b.queue = nil
	var (
		pb     pgx.Batch
		counts = make([]int64, len(q))
	)
	askXID := b.xid == 0
	if askXID {
		pb.Queue(txidSQL)
	}
	for _, s := range q {
		pb.Queue(l.pgStmts[s.i], l.d.args(s.args)...)
	}
	err := b.conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("the connection is a %T, not pgx's", dc)
		}
		br := sc.Conn().SendBatch(context.Background(), &pb)
		if askXID {
			if err := br.QueryRow().Scan(&b.xid, &b.pid); err != nil {
				br.Close()
				return l.wrap("write", err)
			}
		}
		for j := range q {
			s := &q[j]
			if s.id != nil {
				if err := br.QueryRow().Scan(s.id); err != nil {
					br.Close()
					return l.wrap(s.op.String(), err)
				}
				continue
			}
			ct, err := br.Exec()
			if err != nil {
				br.Close()
				return l.wrap(s.op.String(), err)
			}
			counts[j] = ct.RowsAffected()
		}
		if err := br.Close(); err != nil {
			return l.wrap("write", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for j := range q {
		s := &q[j]
		if s.check == nil {
			continue
		}
		err := s.check(counts[j])
		var d declined
		switch {
		case errors.As(err, &d):
			if b.declines == nil {
				b.declines = map[int]error{}
			}
			b.declines[s.write] = d.err
		case err != nil:
			return err
		}
	}
	return nil
}

// queues says whether o's statements may wait in the queue on
// PostgreSQL: those of the writer's hot path, which read nothing back
// within the transaction. Any other write sees the ones queued before it
// sent first.
func queues(o op) bool {
	switch o.(type) {
	case insertOp, *cellOp, verdictOp, startOp, finishOp:
		return true
	}
	return false
}

// begin opens a transaction of the writer; on PostgreSQL on a connection
// held for it, which send reaches through Raw.
func (w *writer) begin() (batch, error) {
	l := w.l
	if !l.d.pg {
		t, err := l.w.Begin()
		return batch{w: w, tx: t}, err
	}
	ctx := context.Background()
	conn, err := l.w.Conn(ctx)
	if err != nil {
		return batch{}, err
	}
	t, err := conn.BeginTx(ctx, nil)
	if err != nil {
		if classify(err) == pgTransient {
			dropConn(conn)
		}
		conn.Close()
		return batch{}, err
	}
	return batch{w: w, tx: tx{t, l.d}, conn: conn}, nil
}

// end commits or rolls back the batch's transaction and gives back its
// connection.
func (b *batch) end(commit bool) error {
	var err error
	if commit {
		err = b.tx.Commit()
	}
	if !commit || err != nil {
		_ = b.tx.Rollback()
	}
	if b.conn != nil {
		b.conn.Close()
	}
	return err
}

// commit runs a batch in one transaction and sets each write's err. A
// write that fails is retried alone, and so is every other write of the
// batch, so that one bad write fails by itself. On PostgreSQL a batch cut
// short by its connection (or by another session's lock) is tried again
// on a connection made again, for a while (reconnect.go).
func (w *writer) commit(qs []queued) {
	if cut := w.try(qs); cut != nil {
		w.recover(qs, cut)
	}
}

// cut is a batch that its connection (or a lock in the way) cut short.
// Nothing it did holds, unless it was committing: then the server may
// have committed it before the connection went, and xid tells.
type cut struct {
	err        error
	committing bool
	xid        int64
	pid        int64 // the server process the transaction ran in
	staged     map[textKey]int64
}

// alone is a write's failure that aborted its batch's transaction and
// that trying it again would not mend (a take-over that waited out
// lock_timeout, or whose caller gave up): it fails, and the other writes
// of the batch are tried again without it.
type alone struct{ err error }

func (a alone) Error() string { return a.err.Error() }
func (a alone) Unwrap() error { return a.err }

// try is one attempt at commit: nil once every write's err is set, or the
// cut that a new connection may mend (PostgreSQL only).
func (w *writer) try(qs []queued) *cut {
	l := w.l
	if len(qs) > 1 {
		foldStarts(qs)
	}
	b, err := w.begin()
	if err != nil {
		if c := w.cutBy(&b, err); c != nil {
			return c
		}
		for i := range qs {
			qs[i].err = l.wrap("begin a write", err)
		}
		return nil
	}
	if err := b.fence(); err != nil {
		if c := w.cutBy(&b, err); c != nil {
			return c
		}
		_ = b.end(false)
		w.failAll(qs, err)
		return nil
	}
	// failed ends the batch on a statement's error: tried again whole on
	// a new connection, failed whole where the session cannot write, or
	// each write tried alone but for skip (-1: none).
	failed := func(err error, skip int) *cut {
		if skip >= 0 {
			_ = b.end(false) // the write's own failure: its connection is well
		} else if c := w.cutBy(&b, err); c != nil {
			return c
		} else {
			_ = b.end(false)
		}
		if l.d.pg && classify(err) == pgCannotWrite {
			w.failAll(qs, err)
			return nil
		}
		if len(qs) == 1 {
			qs[0].err = err
			return nil
		}
		unfold(qs)
		for j := range qs {
			if j != skip {
				w.commit(qs[j : j+1])
			}
		}
		return nil
	}
	for i := range qs {
		if err := b.refused(qs[i].op); err != nil {
			qs[i].err = l.wrap("write", err)
			continue
		}
		if !queues(qs[i].op) {
			if err := b.send(); err != nil {
				return failed(err, -1)
			}
		}
		b.at = i
		err := qs[i].op.apply(&b)
		var d declined
		var a alone
		switch {
		case errors.As(err, &d):
			qs[i].err = d.err
			continue
		case errors.As(err, &a):
			qs[i].err = a.err
			return failed(a.err, i)
		case err != nil:
			return failed(err, -1)
		}
		qs[i].err = nil
	}
	if err := b.send(); err != nil {
		return failed(err, -1)
	}
	for i, err := range b.declines {
		qs[i].err = err
	}
	if l.d.pg && b.xid == 0 {
		if err := b.txid(); err != nil {
			return failed(err, -1)
		}
	}
	if err := b.end(true); err != nil {
		if c := w.cutBy(&b, err); c != nil {
			c.committing = true
			return c
		}
		for i := range qs {
			qs[i].err = l.wrap("commit", err)
		}
		return nil
	}
	w.commits++
	w.remember(b.staged)
	return nil
}

// failAll fails every write of qs with err: the session cannot write
// (pgCannotWrite) or the fence could not be read.
func (w *writer) failAll(qs []queued, err error) {
	if w.l.d.pg && classify(err) == pgCannotWrite {
		err = w.l.wrap("write", w.l.pgExplain(err))
	}
	for i := range qs {
		qs[i].err = err
	}
}

// cutBy is the cut err makes of b, or nil where err is no lost
// connection or lock (or the ledger is SQLite's). It drops b's
// connection, so that the pool makes a new one, and ends b.
func (w *writer) cutBy(b *batch, err error) *cut {
	if !w.l.d.pg || classify(err) != pgTransient {
		return nil
	}
	c := &cut{err: err, xid: b.xid, pid: b.pid, staged: b.staged}
	if b.conn != nil {
		if !isLockTimeout(err) { // else the connection is well: keep it
			dropConn(b.conn)
		}
		_ = b.end(false)
	}
	return c
}

// dropConn closes the connection under conn, so that the pool makes a new
// one rather than hand out one the server may have left.
func dropConn(conn *sql.Conn) {
	_ = conn.Raw(func(dc any) error {
		if sc, ok := dc.(*stdlib.Conn); ok {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = sc.Conn().Close(ctx)
		}
		return nil
	})
}

// txid reads the transaction's id and its server process, so that a
// commit whose answer the connection lost can be asked after
// (txid_status); on a batch with statements queued it goes with them
// (send).
func (b *batch) txid() error {
	return b.tx.QueryRow(txidSQL).Scan(&b.xid, &b.pid)
}

const txidSQL = `SELECT txid_current(), pg_backend_pid()`

// funcOp is a write given as a function of the batch's transaction that
// is no owner's write: a reader closing a run, a take-over. An owner's
// write of its run is a runOp (fence.go).
type funcOp func(b *batch) error

func (f funcOp) apply(b *batch) error { return f(b) }
