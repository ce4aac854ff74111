package ledger

import (
	"database/sql"
	"errors"
	"fmt"
)

// Fencing: a run's owner holds it at a generation, its token (0 from
// CreateRun, the new one from ResumeRun), and every take-over makes the
// generation one more. Each transaction of the writer (commit, batch.go)
// first reads, for each run this process holds in the ledger, the
// generation stored: one that moved on means another process resumed the
// run, and every write of this transaction to that run is refused with a
// *TakenOverError, writing nothing. Since every write goes through commit,
// no write of a superseded owner can reach the ledger: not a heartbeat, a
// request row, a start or an end, a cell, a verdict, an end of the run.
//
// The same check takes a run back that a reader closed as interrupted
// while this process was silent past its Lease but that nobody resumed:
// the first transaction after its silence makes it running again and
// reopens the requests the reader closed, before the writes that follow
// them (a start of one of those requests) are applied.

// TakenOverError is a write refused because another process took its run
// over. It wraps ErrTakenOver.
type TakenOverError struct {
	Run string
	By  Owner // the owner the run has now
}

func (e *TakenOverError) Error() string {
	return fmt.Sprintf("run %s was taken over by %s", e.Run, e.By)
}

func (e *TakenOverError) Unwrap() error { return ErrTakenOver }

// fence checks the runs this process holds against the ledger, in b's
// transaction: it sets b.fenced to those taken over, and takes back those
// a reader closed.
func (b *batch) fence() error {
	l := b.w.l
	for _, h := range l.heldHere() {
		// FOR SHARE (PostgreSQL): a take-over (ResumeRun, FOR UPDATE)
		// waits for this transaction, so the generation read here is
		// still the run's when it commits.
		cur, err := scanFence(b.fenceRow(h.id))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return l.wrap("check the owner of run "+h.id, err)
		case cur.Generation != h.gen || cur.Owner != l.self:
			if b.fenced == nil {
				b.fenced = map[string]error{}
			}
			b.fenced[h.id] = &TakenOverError{Run: h.id, By: cur.Owner}
		case cur.Status == RunInterrupted:
			if err := l.takeBack(b.tx, cur); err != nil {
				return err
			}
		}
	}
	return nil
}

// fenceRow reads run id's fenceSQL in b's transaction: by the statement
// prepared once on SQLite, where parsing it again at every commit took a
// percent of a run's CPU.
func (b *batch) fenceRow(id string) *sql.Row {
	l := b.w.l
	if l.fenceStmt == nil {
		return b.tx.QueryRow(fenceSQL+l.d.forShare, id)
	}
	if b.fenceQ == nil {
		b.fenceQ = b.tx.Stmt(l.fenceStmt)
	}
	return b.fenceQ.QueryRow(id)
}

// fenceSQL reads what fence compares and takeBack needs of a run: not
// its config, models and tests, which a commit of a large run would
// otherwise read and decode every time (their size is the run's).
const fenceSQL = `SELECT id, status, ended_ms, pid, host, owner_start, owner_user, generation FROM runs WHERE id = ?`

func scanFence(s scanner) (RunRow, error) {
	var r RunRow
	var ended sql.NullInt64
	if err := s.Scan(&r.ID, &r.Status, &ended, &r.Owner.PID, &r.Owner.Host, &r.Owner.Start, &r.Owner.User, &r.Generation); err != nil {
		return RunRow{}, err
	}
	r.EndedAt = timeFromMS(ended)
	return r, nil
}

// refused says whether o writes to a run taken over, and with what error.
func (b *batch) refused(o op) error {
	if len(b.fenced) == 0 {
		return nil
	}
	var runs []string
	switch o := o.(type) {
	case runOp:
		runs = []string{o.run}
	case insertOp:
		for _, r := range o.rs {
			runs = append(runs, r.RunID)
		}
	case *cellOp:
		runs = []string{o.c.RunID}
	case verdictOp:
		runs = []string{o.v.RunID}
	case startOp:
		runs = b.runOfRequest(o.id)
	case finishOp:
		if o.r.RunID != "" {
			runs = []string{o.r.RunID}
		} else {
			runs = b.runOfRequest(o.r.ID)
		}
	}
	for _, id := range runs {
		if err := b.fenced[id]; err != nil {
			return err
		}
	}
	return nil
}

// runOfRequest is the run of request id, read only while a held run is
// fenced (starts carry no run id).
func (b *batch) runOfRequest(id int64) []string {
	var run string
	if err := b.tx.QueryRow(`SELECT run_id FROM requests WHERE id = ?`, id).Scan(&run); err != nil {
		return nil
	}
	return []string{run}
}

// takeBack makes a run this process holds, closed as interrupted by a
// reader while it was silent, running again, and reopens the requests
// closed with it (queued, submitted or running, by what their row shows).
func (l *Ledger) takeBack(tx tx, cur RunRow) error {
	op := "take back run " + cur.ID
	// Only the rows that the reconcile closed: they ended with the run.
	_, err := tx.Exec(`UPDATE requests SET ended_ms = NULL, status = CASE
			WHEN started_ms IS NOT NULL THEN 'running'
			WHEN batch_id <> '' THEN 'submitted'
			ELSE 'queued' END
		WHERE run_id = ? AND status = 'interrupted' AND ended_ms IS NOT DISTINCT FROM ?`, cur.ID, msOrNull(cur.EndedAt))
	if err != nil {
		return l.wrap(op, err)
	}
	_, err = tx.Exec(`UPDATE runs SET status = 'running', ended_ms = NULL, message = '' WHERE id = ?`, cur.ID)
	if err != nil {
		return l.wrap(op, err)
	}
	return nil
}

// runOp is a write to one run's row (or rows), given as a function of the
// batch: fenced like every write of a run.
type runOp struct {
	run string
	f   func(b *batch) error
}

func (o runOp) apply(b *batch) error { return o.f(b) }
