package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Reconciling: a run whose status is running but whose process is gone
// (goneWhy) is closed the first time anyone reads it (Run, Runs, Requests
// and what calls them): status interrupted, ended at its last sign of life
// (its last heartbeat, or a later request row), its open requests closed
// as interrupted at that time. One transaction, which changes nothing
// unless the run still reads as the reader saw it (running, same owner,
// same heartbeat): a heartbeat written in between is the owner proving it
// lives, and a second reader finds the run already closed. Where the file
// cannot be written (a read-only ledger on a read-only file), the reader
// is shown the same end without writing it.

// querier is a db or a tx.
type querier interface {
	QueryRow(query string, args ...any) *sql.Row
}

const openStatuses = `('queued', 'submitted', 'running')`

// settle returns r as it stands once reconciled: interrupted if its
// process is gone, unchanged otherwise. Failures to look or to write leave
// the run as read, or shown interrupted: a read never fails for it.
func (l *Ledger) settle(r RunRow) RunRow { return l.settleContext(context.Background(), r) }

// settleContext is settle whose wait for the run's lock ends with ctx.
func (l *Ledger) settleContext(ctx context.Context, r RunRow) RunRow {
	if r.Status != RunRunning || r.Heartbeat.IsZero() {
		return r
	}
	why, last, err := l.diagnose(l.r, r)
	if err != nil || why == "" {
		return r
	}
	cur, err := l.interrupt(ctx, r, why)
	if err != nil {
		r.Status, r.EndedAt, r.Message = RunInterrupted, last, interruptedMessage(r.ID, why)
		return r
	}
	return cur
}

// diagnose says why r's process is gone ("" if it may be alive) and when
// it was last heard from.
func (l *Ledger) diagnose(q querier, r RunRow) (why string, last time.Time, err error) {
	var activity time.Time
	noOwner := r.Owner.none()
	if noOwner && r.Status == RunRunning {
		if activity, err = l.lastActivity(q, r.ID); err != nil {
			return "", time.Time{}, l.wrap("run "+r.ID, err)
		}
	}
	why = goneWhy(r, activity, l.self, l.holds(r), l.now(), l.gone)
	if why == "" {
		return "", time.Time{}, nil
	}
	if !noOwner {
		if activity, err = l.lastActivity(q, r.ID); err != nil {
			return "", time.Time{}, l.wrap("run "+r.ID, err)
		}
	}
	last = r.Heartbeat
	if activity.After(last) {
		last = activity
	}
	return why, last, nil
}

func (l *Ledger) lastActivity(q querier, runID string) (time.Time, error) {
	var ms int64
	if err := q.QueryRow(l.d.activity, runID).Scan(&ms); err != nil {
		return time.Time{}, err
	}
	if ms == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}

func interruptedMessage(id, why string) string {
	return fmt.Sprintf("interrupted: %s. `pitwall resume %s` continues it", why, id)
}

// interrupt writes the end of a run seen gone, and returns the run as it
// then stands (already closed, or alive after all, when another process
// got there first). A writable ledger writes it through its writer, after
// the writes it has queued; a read-only one through its fixer.
func (l *Ledger) interrupt(ctx context.Context, seen RunRow, why string) (RunRow, error) {
	op := "reconcile run " + seen.ID
	var cur RunRow
	if l.wr != nil {
		err := l.wr.do(funcOp(func(b *batch) error {
			var err error
			if l.d.pg {
				// A reader does not wait long for the run's lock: the
				// next one can close the run instead, and a take-over
				// (ResumeRun) must not wait out two lock timeouts.
				restore, err := shortLockWait(b.tx, l.fixBusyMS)
				if err != nil {
					return l.wrap(op, err)
				}
				if cur, err = l.writeInterrupt(ctx, b.tx, seen, why); err != nil {
					if isLockTimeout(err) || ctx.Err() != nil {
						return alone{err}
					}
					return err
				}
				return restore()
			}
			cur, err = l.writeInterrupt(ctx, b.tx, seen, why)
			return err
		}))
		return cur, err
	}
	fix, err := l.fixer()
	if err != nil {
		return RunRow{}, l.wrap(op, err)
	}
	tx, err := fix.Begin()
	if err != nil {
		return RunRow{}, l.wrap(op, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if l.d.pg {
		// As SQLite's busy timeout: the next reader can write it instead.
		if _, err := tx.Exec(fmt.Sprintf("SET LOCAL lock_timeout = %d", l.fixBusyMS)); err != nil {
			return RunRow{}, l.wrap(op, err)
		}
	}
	if cur, err = l.writeInterrupt(ctx, tx, seen, why); err != nil {
		return RunRow{}, err
	}
	if err := tx.Commit(); err != nil {
		return RunRow{}, l.wrap(op, err)
	}
	return cur, nil
}

func (l *Ledger) writeInterrupt(ctx context.Context, tx tx, seen RunRow, why string) (RunRow, error) {
	op := "reconcile run " + seen.ID
	// The end is computed under the write lock, so no request row of the
	// run can begin after it.
	res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', message = ?2,
		ended_ms = `+l.d.interruptEnd+`
		WHERE id = ?1 AND status = 'running' AND pid = ?3 AND host = ?4 AND heartbeat_ms = ?5 AND generation = ?6`,
		seen.ID, interruptedMessage(seen.ID, why), seen.Owner.PID, seen.Owner.Host, seen.Heartbeat.UnixMilli(), seen.Generation)
	if err != nil {
		return RunRow{}, l.wrap(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return RunRow{}, l.wrap(op, err)
	}
	if n == 1 {
		_, err = tx.Exec(`UPDATE requests SET status = 'interrupted',
			ended_ms = (SELECT ended_ms FROM runs WHERE id = ?1)
			WHERE run_id = ?1 AND status IN `+openStatuses, seen.ID)
		if err != nil {
			return RunRow{}, l.wrap(op, err)
		}
	}
	cur, err := scanRun(tx.QueryRow(runByIDSQL, seen.ID))
	if err != nil {
		return RunRow{}, l.wrap(op, err)
	}
	return cur, nil
}

// shortLockWait sets t's lock_timeout to ms until restore, which sets it
// back to the session's: the statements after it in the writer's batch
// are other writes, which wait as long as ever.
func shortLockWait(t tx, ms int) (restore func() error, err error) {
	var was string
	if err := t.QueryRow(`SELECT current_setting('lock_timeout')`).Scan(&was); err != nil {
		return nil, err
	}
	if _, err := t.Exec(`SELECT set_config('lock_timeout', ?, true)`, fmt.Sprint(ms)); err != nil {
		return nil, err
	}
	return func() error {
		_, err := t.Exec(`SELECT set_config('lock_timeout', ?, true)`, was)
		return err
	}, nil
}

// fixerBusyMS bounds a reconcile's wait for another process's write lock:
// shorter than a writer's, since the next reader can write it instead.
const fixerBusyMS = 2000

// fixer is what a ledger opened read-only writes reconciles through: a
// connection of its own, opened on first need (most reads find nothing to
// reconcile) and never creating the file.
func (l *Ledger) fixer() (db, error) {
	l.fixMu.Lock()
	defer l.fixMu.Unlock()
	if l.fix.DB != nil {
		return l.fix, nil
	}
	if l.r.DB == nil {
		return db{}, errors.New("ledger is closed")
	}
	var (
		fix *sql.DB
		err error
	)
	if l.d.pg {
		fix, err = openPG(l.abs, l.self)
	} else {
		fix, err = sql.Open("sqlite", dsn(l.abs, url.Values{
			"mode":          {"rw"},
			"_busy_timeout": {fmt.Sprint(l.fixBusyMS)},
			"_txlock":       {"immediate"},
		}))
	}
	if err != nil {
		return db{}, err
	}
	fix.SetMaxOpenConns(1)
	l.fix = db{fix, l.d}
	return l.fix, nil
}

// Heartbeat says that this process (l.Self()) still runs the run: the
// process running a run calls it every HeartbeatEvery from CreateRun or
// ResumeRun until FinishRun. One indexed update.
//
// If a reader closed the run as interrupted while this process was silent
// past its Lease and nobody resumed it, it is taken back (fence.go). If
// another process has resumed the run since, it wraps ErrTakenOver (a
// *TakenOverError): stop sending for it. After FinishRun it does nothing.
func (l *Ledger) Heartbeat(runID string, at time.Time) error {
	op := "heartbeat of run " + runID
	return l.write(runID, op, func(b *batch) error {
		res, err := b.tx.Exec(`UPDATE runs SET heartbeat_ms = ? WHERE id = ? AND status = 'running' AND pid = ? AND host = ?`,
			at.UnixMilli(), runID, l.self.PID, l.self.Host)
		if err != nil {
			return l.wrap(op, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return l.wrap(op, err)
		} else if n == 1 {
			return nil
		}
		cur, err := scanRun(b.tx.QueryRow(runByIDSQL, runID))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return declined{l.wrap(op, ErrNotFound)}
		case err != nil:
			return l.wrap(op, err)
		case cur.Status == RunRunning && cur.Owner != l.self:
			return declined{l.wrap(op, &TakenOverError{Run: runID, By: cur.Owner})}
		}
		return nil // finished: nothing to keep alive
	})
}

// ResumeRun makes this process the owner of a run, to continue it: id as
// in Run ("last", a prefix); the run is read (and reconciled) first. It
// becomes running again with Owner = l.Self(), Heartbeat = at, no end and
// no message, and any request still open (a run that failed mid-write) is
// closed as interrupted, so that every open request is this process's
// own. It returns the run as it now stands. Any status can be resumed
// (interrupted, stopped, failed, completed for a retry), but not a run
// that a live process runs: that wraps ErrHeld and says which process.
// A run this process already holds comes back as it is.
//
// On PostgreSQL a take-over that meets another session's lock on the run
// (its owner inside a write, perhaps stopped there) waits lock_timeout for
// it, then fails wrapping ErrLocked: try again.
func (l *Ledger) ResumeRun(id string, at time.Time) (RunRow, error) {
	return l.ResumeRunContext(context.Background(), id, at)
}

// ResumeRunContext is ResumeRun whose wait for the run's lock ends when
// ctx does (ctrl+z's victim is not waited for after a ctrl+c): it then
// fails with ctx's error, having changed nothing.
func (l *Ledger) ResumeRunContext(ctx context.Context, id string, at time.Time) (RunRow, error) {
	if l.wr == nil {
		return RunRow{}, l.wrap("resume run", ErrReadOnly)
	}
	run, err := l.findRun(id)
	if err != nil {
		return RunRow{}, err
	}
	run = l.settleContext(ctx, run)
	if err := ctx.Err(); err != nil {
		return RunRow{}, l.wrap("resume run "+run.ID, err)
	}
	if run.Status == RunRunning && l.holds(run) {
		return run, nil
	}
	op := "resume run " + run.ID
	var cur RunRow
	err = l.wr.do(funcOp(func(b *batch) error {
		tx := b.tx
		if err := ctx.Err(); err != nil {
			return declined{l.wrap(op, err)}
		}
		var err error
		// FOR UPDATE (PostgreSQL): first, so that the owner's transaction
		// under way ends before the generation moves (fence.go).
		if cur, err = scanRun(tx.QueryRowContext(ctx, runByIDSQL+l.d.forUpdate, run.ID)); err != nil {
			switch {
			case ctx.Err() != nil:
				return alone{l.wrap(op, ctx.Err())}
			case isLockTimeout(err):
				return alone{l.wrap(op, lockedError(run.ID))}
			}
			return l.wrap(op, err)
		}
		if cur.Status == RunRunning {
			why, _, err := l.diagnose(tx, cur)
			if err != nil {
				return err
			}
			if why == "" {
				return declined{l.wrap(op, Held(cur, l.now()))}
			}
		}
		_, err = tx.Exec(`UPDATE requests SET status = 'interrupted', ended_ms = ?
			WHERE run_id = ? AND status IN `+openStatuses, at.UnixMilli(), cur.ID)
		if err != nil {
			return l.wrap(op, err)
		}
		// The generation moves on: the process before, if it still runs,
		// finds its writes refused from now on (fence.go).
		_, err = tx.Exec(`UPDATE runs SET status = 'running', pid = ?, host = ?, owner_start = ?, owner_user = ?,
			heartbeat_ms = ?, ended_ms = NULL, message = '', generation = generation + 1 WHERE id = ?`,
			l.self.PID, l.self.Host, l.self.Start, l.self.User, at.UnixMilli(), cur.ID)
		if err != nil {
			return l.wrap(op, err)
		}
		return nil
	}))
	if err != nil {
		return RunRow{}, err
	}
	cur.Status, cur.Owner, cur.Heartbeat = RunRunning, l.self, time.UnixMilli(at.UnixMilli())
	cur.EndedAt, cur.Message, cur.ExitCode = time.Time{}, "", nil
	cur.Generation++
	l.hold(cur.ID, cur.Generation)
	return cur, nil
}

// Held is the error that says run r is run by a live process (or one that
// nothing shows dead): who, since when, when it was last heard from, and
// what to do. It wraps ErrHeld. `resume` says it of a run Run reads
// running; ResumeRun of such a run returns it.
func Held(r RunRow, now time.Time) error {
	if r.Heartbeat.IsZero() {
		return fmt.Errorf("%w: it is marked running by %s, so nothing shows whether it is alive", ErrHeld, r.Owner)
	}
	since := ""
	if !r.StartedAt.IsZero() {
		since = " since " + r.StartedAt.Format("2006-01-02 15:04:05")
	}
	return fmt.Errorf("%w: %s has run it%s (last heartbeat %s ago); a stopped or sleeping process is still alive: continue it, end it, or wait for it to end",
		ErrHeld, r.Owner, since, now.Sub(r.Heartbeat).Truncate(time.Second))
}
