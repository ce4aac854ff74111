package ledger

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestPostgresSessionsBoundTheirWaitsUnlessTheURLSaysOtherwise(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	tests := []struct {
		name, query             string
		lock, idle, application string
	}{
		{"pitwall's own", "", "10s", "1min", "pitwall pid "},
		{"the URL's", "&lock_timeout=1500&application_name=mine&options=-c%20idle_in_transaction_session_timeout%3D5000",
			"1500ms", "5s", "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Open(testPath(t) + tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			for name, pool := range map[string]db{"writer": l.w, "reader": l.r} {
				var lock, idle, app string
				err := pool.QueryRow(`SELECT current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout'),
					current_setting('application_name')`).Scan(&lock, &idle, &app)
				if err != nil {
					t.Fatal(err)
				}
				if lock != tt.lock || idle != tt.idle || !strings.HasPrefix(app, tt.application) {
					t.Errorf("%s: lock_timeout %s, idle_in_transaction_session_timeout %s, application_name %q; want %s, %s, %q...",
						name, lock, idle, app, tt.lock, tt.idle, tt.application)
				}
			}
		})
	}
}

// stoppedOwner is a session that locked run's row inside a transaction
// and stays there, as a pitwall stopped by ctrl+z inside a write would.
func stoppedOwner(t *testing.T, url, run string) (release func()) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if err := tx.QueryRow(ctx, `SELECT id FROM runs WHERE id = $1 FOR UPDATE`, run).Scan(&id); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback(ctx)
			c.Close(ctx)
		}
	}
	t.Cleanup(release)
	return release
}

// A take-over that meets the lock of a session stopped inside a
// transaction fails in seconds, saying so, instead of waiting for it
// forever; a ctrl+c (its context) ends the wait at once. Nothing changes,
// and once the lock goes the take-over goes through.
func TestATakeOverMeetingAStoppedSessionsLockFailsInSeconds(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	base := ms("2026-11-23T12:00:00Z")
	at := base.Add(Lease + time.Second) // host-a is silent past its lease
	for _, cancelled := range []bool{false, true} {
		name := map[bool]string{false: "lock_timeout", true: "ctrl+c"}[cancelled]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := newOwners(t)
			a := o.as(Owner{PID: 111, Host: "host-a"}, base, false)
			if err := a.CreateRun(RunRow{ID: "r", Status: RunRunning, StartedAt: base, Owner: a.Self(), Heartbeat: base}); err != nil {
				t.Fatal(err)
			}
			// The stopped session stands for a; a's ledger lets go of the run
			// (this process's holds span ledgers, and b's writer would fence it).
			a.release("r")
			release := stoppedOwner(t, o.path, "r")
			b := o.as(Owner{PID: 222, Host: "host-b"}, at, false)
			ctx := context.Background()
			if cancelled {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(300*time.Millisecond, cancel)
			}
			start := time.Now()
			_, err := b.ResumeRunContext(ctx, "r", at)
			took := time.Since(start)
			switch {
			case cancelled && !errors.Is(err, context.Canceled):
				t.Fatalf("ResumeRunContext cancelled = %v, want context.Canceled", err)
			case cancelled && took > 5*time.Second:
				t.Errorf("a cancelled take-over returned after %s; want at once", took)
			case !cancelled && (!errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "try again")):
				t.Fatalf("ResumeRun meeting a lock = %v, want ErrLocked saying to try again", err)
			case !cancelled && took > 15*time.Second:
				t.Errorf("ResumeRun meeting a lock returned after %s; want within lock_timeout and a reader's wait", took)
			}
			t.Logf("%s: %v after %s", name, err, took.Truncate(time.Millisecond))
			release()
			if run, err := a.Run("r"); err != nil || run.Generation != 0 {
				t.Errorf("after the failed take-over: %+v, %v; want generation 0", run, err)
			}
			run, err := b.ResumeRun("r", at)
			if err != nil || run.Generation != 1 || run.Owner != b.Self() {
				t.Errorf("ResumeRun once the lock went = %+v, %v; want it b's at generation 1", run, err)
			}
		})
	}
}

// A server that takes no writes in this session is refused at Open.
func TestAReadOnlyPostgresSessionIsRefusedAtOpen(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	url := testPath(t)
	_, err := Open(url + "&default_transaction_read_only=on")
	if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), "takes no writes") {
		t.Errorf("Open of a read-only session = %v, want ErrNotWritable saying it takes no writes", err)
	}
}
