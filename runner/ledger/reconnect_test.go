package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"pitwall/internal/pgtest"
)

// dbName is the database of a pgtest URL.
func dbName(url string) string {
	return url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
}

// endSessions ends every pitwall session of the test's database, as an
// administrator's pg_terminate_backend would.
func endSessions(c *pgtest.Cluster, url string) error {
	return c.ExecIn(dbName(url), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name LIKE 'pitwall%' AND pid <> pg_backend_pid() AND datname = current_database()`)
}

// writeRun writes n requests of run, each inserted, started, finished and
// its cell put (the last three queued), and returns the failures heard.
func writeRun(l *Ledger, run string, n int) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	ack := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		wg.Done()
	}
	at := time.Now()
	for i := range n {
		r := &Request{RunID: run, Purpose: PurposeInference, Model: "m", Test: fmt.Sprintf("t%03d", i), Attempt: 1, QueuedAt: at}
		if err := l.InsertRequests([]*Request{r}); err != nil {
			return fmt.Errorf("insert %d: %w", i, err)
		}
		wg.Add(3)
		l.QueueStart(r.ID, "gpu0", at, ack)
		l.QueueFinish(&Request{ID: r.ID, RunID: run, Status: StatusCompleted, Output: fmt.Sprintf("answer %d", i), EndedAt: at}, ack)
		l.QueueCell(CellRow{RunID: run, Model: "m", Test: r.Test, Status: "completed", Output: fmt.Sprintf("answer %d", i)}, ack)
	}
	if err := l.Flush(); err != nil {
		return err
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkWritten says whether run holds exactly n requests, each completed
// once with its answer, and n cells, read on a connection of its own.
func checkWritten(t *testing.T, url, run string, n int) {
	t.Helper()
	c, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var reqs, completed, tests, cells int
	err = c.QueryRow(`SELECT count(*), count(*) FILTER (WHERE status = 'completed' AND started_ms IS NOT NULL), count(DISTINCT test)
		FROM requests WHERE run_id = $1`, run).Scan(&reqs, &completed, &tests)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(`SELECT count(*) FROM cells WHERE run_id = $1`, run).Scan(&cells); err != nil {
		t.Fatal(err)
	}
	if reqs != n || completed != n || tests != n || cells != n {
		t.Errorf("run %s holds %d requests (%d completed, %d tests) and %d cells; want %d of each, once", run, reqs, completed, tests, cells, n)
	}
}

func TestWritesOutliveTheirSessionsBeingEnded(t *testing.T) {
	t.Parallel()
	c := pgOnly(t)
	url := testPath(t)
	l, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.reconnectFor = 30 * time.Second
	admin, err := sql.Open("pgx", c.URL(dbName(url)))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var ended atomic.Int64 // sessions of the ledger ended
	stop := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			var n int64
			if err := admin.QueryRow(`SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name LIKE 'pitwall%' AND pid <> pg_backend_pid() AND datname = current_database()`).Scan(&n); err == nil {
				ended.Add(n)
			}
		}
	}()
	// Runs of 30 requests each, until the writer's sessions were ended
	// while it wrote a good many times.
	const n = 30
	var runs int
	for runs = 0; ended.Load() < 20 && runs < 100; runs++ {
		if err := writeRun(l, fmt.Sprint("r", runs), n); err != nil {
			close(stop)
			<-killed
			t.Fatalf("run %d, after %d sessions ended: writes failed: %v", runs, ended.Load(), err)
		}
	}
	close(stop)
	<-killed
	t.Logf("%d sessions ended while writing %d runs", ended.Load(), runs)
	if ended.Load() < 20 {
		t.Fatalf("only %d of the ledger's sessions were ended", ended.Load())
	}
	for i := range runs {
		checkWritten(t, url, fmt.Sprint("r", i), n)
	}
	if _, ok := l.Reconnecting(); ok {
		t.Error("Reconnecting after the writes went through")
	}
}

// A restart of the server within the bound: the writes wait for it, say
// so (Reconnecting), and go through once it is back; none is lost or
// written twice. On a cluster of its own, whose restart ends no other
// test's sessions.
func TestWritesOutliveARestartOfTheServer(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	c, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	url := c.NewDatabase(t)
	l, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.reconnectFor = 40 * time.Second
	if err := l.CreateRun(RunRow{ID: "r", Status: RunRunning, StartedAt: time.Now(), Owner: l.Self(), Heartbeat: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := writeRun(l, "r", 50); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan error, 1)
	var saw time.Time
	go func() { restarted <- c.Restart(2 * time.Second) }()
	// The writes of a second run go on through the restart.
	done := make(chan error, 1)
	go func() {
		done <- writeRun(l, "r2", 50)
	}()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			done <- err
			waiting = false
		case <-time.After(20 * time.Millisecond):
			if since, ok := l.Reconnecting(); ok && saw.IsZero() {
				saw = since
			}
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("writes across the restart failed: %v", err)
	}
	if saw.IsZero() {
		t.Error("the writer never said it was reconnecting")
	}
	checkWritten(t, url, "r", 50)
	checkWritten(t, url, "r2", 50)
}

// Past the bound the writes fail as before, saying the server cannot be
// reached; a session that may not write fails at once, saying why.
func TestWritesFailPastTheBoundOrAtOnceWhereTheSessionCannotWrite(t *testing.T) {
	t.Parallel()
	c := pgOnly(t)
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		url := testPath(t)
		l, err := Open(url)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := c.ExecIn(dbName(url), `ALTER DATABASE "`+dbName(url)+`" SET default_transaction_read_only = on`); err != nil {
			t.Fatal(err)
		}
		if err := endSessions(c, url); err != nil { // the next session is read-only
			t.Fatal(err)
		}
		start := time.Now()
		_, err = l.InsertRequest(&Request{RunID: "r", Purpose: PurposeInference, Model: "m", Test: "t"})
		if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), "takes no writes") {
			t.Errorf("a write in a read-only session = %v; want ErrNotWritable saying the server takes no writes", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("a write in a read-only session failed after %s; want at once", took)
		}
	})
	t.Run("past the bound", func(t *testing.T) {
		t.Parallel()
		url := testPath(t)
		l, err := Open(url + "&lock_timeout=200") // its writes wait 200 ms for a lock
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		l.reconnectFor = time.Second
		// A session holding the runs table stands in for a server away: every
		// write of the run waits on it past lock_timeout, and is tried again.
		if err := l.CreateRun(RunRow{ID: "r", Status: RunRunning, StartedAt: time.Now(), Owner: l.Self(), Heartbeat: time.Now()}); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		raw, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close(ctx)
		if _, err := raw.Exec(ctx, `BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		err = l.Heartbeat("r", time.Now())
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "given up") {
			t.Errorf("a write past the bound = %v; want ErrUnreachable saying it was given up", err)
		}
	})
}

// A batch whose connection went while it committed is tried again only if
// the server says it did not commit: one that committed is not written
// twice, one that aborted is written, and one still in progress (its
// server process not yet told) is ended first, then written.
func TestACommitCutShortIsWrittenOnce(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	url := testPath(t)
	l, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	count := func(test string) int {
		var n int
		if err := l.w.QueryRow(`SELECT count(*) FROM requests WHERE test = ?`, test).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// xidOf runs f in a transaction of a session of its own and returns
	// its id and server process, ended by end (commit, rollback, or none:
	// left open).
	xidOf := func(end string) (xid, pid int64) {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		if _, err := c.Exec(ctx, `BEGIN`); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, txidSQL).Scan(&xid, &pid); err != nil {
			t.Fatal(err)
		}
		if end != "" {
			if _, err := c.Exec(ctx, end); err != nil {
				t.Fatal(err)
			}
		}
		return xid, pid
	}
	for _, tt := range []struct {
		name, end string
		want      int
	}{
		{"committed", "COMMIT", 0},
		{"aborted", "ROLLBACK", 1},
		{"in progress", "", 1},
	} {
		xid, pid := xidOf(tt.end)
		r := &Request{RunID: "r", Purpose: PurposeInference, Model: "m", Test: tt.name, QueuedAt: time.Now(), Status: StatusQueued}
		qs := []queued{{op: insertOp{[]*Request{r}}}}
		// As if the batch had run in that transaction and the
		// connection went at its COMMIT.
		l.wr.recover(qs, &cut{err: errors.New("connection lost"), committing: true, xid: xid, pid: pid})
		if qs[0].err != nil {
			t.Errorf("%s: %v", tt.name, qs[0].err)
		}
		if got := count(tt.name); got != tt.want {
			t.Errorf("%s: the write is in the ledger %d times, want %d", tt.name, got, tt.want)
		}
	}
}
