package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Reconnecting: on PostgreSQL the writer's connection may go while a run
// writes (the server restarted, an administrator ended the session, the
// network went away). A batch cut short so (pgTransient: also a lock
// that another session held past lock_timeout) is not failed: the writes
// stay queued behind it, and the writer makes its connection again, with
// a backoff, for Ledger.reconnectFor (ReconnectFor), then tries the batch
// again, fenced anew (fence.go), so that an owner taken over meanwhile
// writes nothing. Only past that bound do the writes fail as before.
//
// Trying again never writes a write twice. A batch cut before its COMMIT
// reached the server was rolled back by it. One cut while committing may
// have committed: the writer asks the server (txid_status of the
// transaction's id, read in the batch) and tries it again only if it did
// not; while the old transaction is still in progress (a network cut, its
// server process not yet told), that process is ended first.
//
// Errors that no new connection mends fail at once, with their reason: a
// read-only server or transaction, a privilege taken away
// (pgCannotWrite), a login refused or a database gone while reconnecting.

// ReconnectFor is how long the writer tries to write again after its
// connection went, before its writes fail.
const ReconnectFor = time.Minute

const (
	firstPause = 100 * time.Millisecond
	maxPause   = 2 * time.Second
	// closeGrace: once the ledger is closing (ctrl+c during an outage),
	// the writer tries for that much longer at most.
	closeGrace   = 5 * time.Second
	reachTimeout = 5 * time.Second
)

// Reconnecting says whether the writer is making its connection to the
// server again, and since when: its writes wait meanwhile (a run's
// header can say so). Always false on SQLite.
func (l *Ledger) Reconnecting() (since time.Time, ok bool) {
	if l.wr == nil {
		return time.Time{}, false
	}
	l.wr.mu.Lock()
	defer l.wr.mu.Unlock()
	return l.wr.lostAt, !l.wr.lostAt.IsZero()
}

// recover tries qs again, cut short by c, until it commits, fails for a
// reason of its own, or the bound passes.
func (w *writer) recover(qs []queued, c *cut) {
	l := w.l
	start := time.Now()
	w.mu.Lock()
	mine := w.lostAt.IsZero() // a write retried alone within a recovery is the same outage
	if mine {
		w.lostAt = start
	}
	w.mu.Unlock()
	if mine {
		defer func() {
			w.mu.Lock()
			w.lostAt = time.Time{}
			w.mu.Unlock()
		}()
	}
	pause := firstPause
	for {
		if !w.pause(pause, start) {
			w.failAll(qs, l.wrap("write", fmt.Errorf("%w: %s; no write went through for %s, so it was given up",
				ErrUnreachable, l.pgExplain(c.err), time.Since(start).Truncate(time.Second))))
			return
		}
		pause = min(2*pause, maxPause)
		if err := w.reach(); err != nil {
			if classify(err) != pgTransient {
				w.failAll(qs, l.wrap("write", l.pgExplain(err)))
				return
			}
			c.err = err
			continue
		}
		if c.committing {
			status, err := w.txStatus(c.xid)
			switch {
			case err != nil:
				c.err = err
				continue
			case status == "committed":
				w.commits++
				w.remember(c.staged)
				return
			case status == "in progress":
				w.endOrphan(c)
				continue
			case status != "aborted":
				w.failAll(qs, l.wrap("commit", fmt.Errorf("the connection went while committing, and the server no longer knows whether transaction %d committed", c.xid)))
				return
			}
		}
		unfold(qs)
		if c = w.try(qs); c == nil {
			return
		}
	}
}

// pause waits d, or less where the bound (from start; closeGrace from
// Close) comes first, and says whether there is time for another try.
func (w *writer) pause(d time.Duration, start time.Time) bool {
	for {
		w.mu.Lock()
		deadline := start.Add(w.l.reconnectFor)
		if !w.closedAt.IsZero() && w.closedAt.Add(closeGrace).Before(deadline) {
			deadline = w.closedAt.Add(closeGrace)
		}
		closing := w.closing
		w.mu.Unlock()
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		t := time.NewTimer(min(d, left))
		stop := w.stop
		if closing {
			stop = nil // heard already: the deadline above has it
		}
		select {
		case <-t.C:
			return true
		case <-stop:
			t.Stop()
			// the deadline may be nearer now
		}
	}
}

// reach makes (or finds) the writer's connection.
func (w *writer) reach() error {
	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout)
	defer cancel()
	return w.l.w.PingContext(ctx)
}

// txStatus asks the server how transaction xid ended: committed, aborted,
// in progress, or "" where it no longer knows.
func (w *writer) txStatus(xid int64) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout)
	defer cancel()
	var s sql.NullString
	err := w.l.w.QueryRowContext(ctx, w.l.d.sql(`SELECT txid_status(?)`), xid).Scan(&s)
	return s.String, err
}

// endOrphan ends the server process still running c's transaction, which
// its connection left (a role may end its own sessions); only while that
// process still runs that transaction, so that a process id used again
// is never hit.
func (w *writer) endOrphan(c *cut) {
	ctx, cancel := context.WithTimeout(context.Background(), reachTimeout)
	defer cancel()
	_, _ = w.l.w.ExecContext(ctx, w.l.d.sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE pid = ? AND backend_xid = (?::bigint % 4294967296)::text::xid`), c.pid, c.xid)
}
