package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// seedRequests writes a request in every state a run leaves behind: two
// completed (an inference and a judge sample), one error, and three open
// (queued, running, submitted to a batch).
func seedRequests(l *Ledger, run string, at time.Time) error {
	add := func(r Request, start bool, end *Request) error {
		r.RunID, r.QueuedAt = run, at
		if _, err := l.InsertRequest(&r); err != nil {
			return err
		}
		if start {
			if err := l.StartRequest(r.ID, "gpu0", at); err != nil {
				return err
			}
		}
		if end != nil {
			end.ID, end.EndedAt = r.ID, at
			return l.FinishRequest(end)
		}
		return nil
	}
	return errors.Join(
		add(Request{Purpose: PurposeInference, Model: "m", Test: "t1", Attempt: 1}, true, &Request{Status: StatusCompleted, Output: "kept"}),
		add(Request{Purpose: PurposeJudge, Model: "judge", CandidateModel: "m", Test: "t1", Judge: "j", Attempt: 1}, true,
			&Request{Status: StatusCompleted, Output: "VERDICT: PASS"}),
		add(Request{Purpose: PurposeInference, Model: "m", Test: "t2", Attempt: 1}, true, &Request{Status: StatusError, ErrorClass: "timeout"}),
		add(Request{Purpose: PurposeInference, Model: "m", Test: "t3", Attempt: 1}, false, nil),
		add(Request{Purpose: PurposeInference, Model: "m", Test: "t4", Attempt: 1}, true, nil),
		add(Request{Purpose: PurposeJudge, Model: "judge", CandidateModel: "m", Test: "t2", Judge: "j", Status: StatusSubmitted, BatchID: "batch_1"}, false, nil),
	)
}

// rawStatuses counts a run's request statuses as stored, past any view.
func rawStatuses(t *testing.T, db db, run string) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT status, count(*) FROM requests WHERE run_id = ? GROUP BY status`, run)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

func rawRunStatus(t *testing.T, db db, run string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(`SELECT status FROM runs WHERE id = ?`, run).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func findRun(t *testing.T, runs []RunRow, id string) RunRow {
	t.Helper()
	for _, r := range runs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("run %s not listed", id)
	return RunRow{}
}

// owners is a ledger file read by several processes, each a *Ledger with
// its own owner and clock.
type owners struct {
	t    *testing.T
	path string
}

func newOwners(t *testing.T) owners {
	return owners{t, testPath(t)}
}

// as opens the file as process who at now (readOnly as `runs` does).
func (o owners) as(who Owner, now time.Time, readOnly bool) *Ledger {
	o.t.Helper()
	open := Open
	if readOnly {
		open = OpenReadOnly
	}
	l, err := open(o.path)
	if err != nil {
		o.t.Fatal(err)
	}
	o.t.Cleanup(func() { l.Close() })
	if who != (Owner{}) {
		l.self = who
	}
	l.now = func() time.Time { return now }
	return l
}

func TestReconcileClosesOnlyRunsWhoseProcessIsGone(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	me := self()
	alivePID := os.Getppid() // alive, and not this process
	tests := []struct {
		name  string
		owner Owner // zero: this process, through the ledger that created it
		beat  time.Duration
		gone  bool
	}{
		{"this process, fresh", Owner{}, 0, false},
		{"this process, late but holding it", Owner{}, time.Hour, false},
		{"a live pid here, fresh", Owner{PID: alivePID, Host: me.Host, Start: parentStart(t)}, time.Second, false},
		{"a live pid here, silent for an hour: stopped, not dead", Owner{PID: alivePID, Host: me.Host, Start: parentStart(t)}, time.Hour, false},
		{"another host, fresh enough", Owner{PID: 4242, Host: "elsewhere"}, Lease, false},
		{"another host, stale", Owner{PID: 4242, Host: "elsewhere"}, Lease + time.Second, true},
		{"a live pid here that another process had: reused", Owner{PID: alivePID, Host: me.Host, Start: "another-boot/1"}, time.Second, procStartKnown},
		{"a dead pid here, fresh", Owner{PID: reapedPID(t), Host: me.Host}, 0, true},
	}
	o := newOwners(t)
	w := o.as(Owner{}, base, false)
	for i, tt := range tests {
		owner := tt.owner
		if owner == (Owner{}) {
			owner = w.Self()
		}
		id := fmt.Sprintf("run%d", i)
		if err := w.CreateRun(RunRow{ID: id, Status: RunRunning, StartedAt: base.Add(-2 * time.Hour),
			Owner: owner, Heartbeat: base.Add(-tt.beat)}); err != nil {
			t.Fatal(err)
		}
		if err := seedRequests(w, id, base.Add(-2*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	r := o.as(Owner{}, base, true)
	runs, err := r.Runs(0)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprintf("run%d", i)
			run := findRun(t, runs, id)
			stored := rawStatuses(t, r.r, id)
			if !tt.gone {
				if run.Status != RunRunning || !run.EndedAt.IsZero() || stored[StatusInterrupted] != 0 || stored[StatusQueued] != 1 {
					t.Errorf("a live run was touched: %s, ended %v, requests %v", run.Status, run.EndedAt, stored)
				}
				return
			}
			if run.Status != RunInterrupted || rawRunStatus(t, r.r, id) != RunInterrupted {
				t.Fatalf("reads %s (stored %s), want interrupted", run.Status, rawRunStatus(t, r.r, id))
			}
			if want := base.Add(-tt.beat); !run.EndedAt.Equal(want) {
				t.Errorf("ended %v, want the heartbeat %v", run.EndedAt, want)
			}
			if stored[StatusInterrupted] != 3 || stored[StatusQueued]+stored[StatusRunning]+stored[StatusSubmitted] != 0 {
				t.Errorf("requests %v, want the 3 open ones interrupted", stored)
			}
		})
	}
}

func TestTheEndIsTheLastSignOfLife(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	o := newOwners(t)
	w := o.as(Owner{}, base, false)
	// A request queued after the last heartbeat: the process lived that long.
	if err := w.CreateRun(RunRow{ID: "r", Status: RunRunning, Owner: Owner{PID: 1, Host: "elsewhere"}, Heartbeat: base.Add(-Lease - time.Minute)}); err != nil {
		t.Fatal(err)
	}
	late := base.Add(-Lease - time.Minute + 1500*time.Millisecond)
	if _, err := w.InsertRequest(&Request{RunID: "r", Purpose: PurposeInference, QueuedAt: late}); err != nil {
		t.Fatal(err)
	}
	run, err := o.as(Owner{}, base, true).Run("r")
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunInterrupted || !run.EndedAt.Equal(late) {
		t.Errorf("%s, ended %v; want interrupted at %v, after its last request began", run.Status, run.EndedAt, late)
	}
}

func TestAReconcileLosesToAHeartbeatWrittenMeanwhile(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	o := newOwners(t)
	owner := o.as(Owner{PID: 111, Host: "host-a"}, base, false)
	if err := owner.CreateRun(RunRow{ID: "r", Status: RunRunning, Owner: owner.Self(), Heartbeat: base}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(owner, "r", base); err != nil {
		t.Fatal(err)
	}
	reader := o.as(Owner{PID: 222, Host: "host-b"}, base.Add(Lease+time.Second), true)
	seen, err := reader.findRun("r")
	if err != nil {
		t.Fatal(err)
	}
	why, _, err := reader.diagnose(reader.r, seen)
	if err != nil || why == "" {
		t.Fatalf("the reader should find the run stale: %q, %v", why, err)
	}
	// The owner was only slow: its heartbeat lands before the reader writes.
	if err := owner.Heartbeat("r", base.Add(Lease)); err != nil {
		t.Fatal(err)
	}
	got, err := reader.interrupt(context.Background(), seen, why)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != RunRunning || rawRunStatus(t, reader.r, "r") != RunRunning {
		t.Errorf("a run whose owner had just sent a heartbeat was closed: %+v", got)
	}
	if st := rawStatuses(t, reader.r, "r"); st[StatusInterrupted] != 0 {
		t.Errorf("its requests were closed: %v", st)
	}
}

func TestConcurrentReadersCloseADeadRunOnce(t *testing.T) {
	t.Parallel()
	base := time.UnixMilli(time.Now().UnixMilli())
	o := newOwners(t)
	w := o.as(Owner{}, base, false)
	for _, id := range []string{"r", "s"} {
		if err := w.CreateRun(RunRow{ID: id, Status: RunRunning, Owner: Owner{PID: 1, Host: "elsewhere"}, Heartbeat: base.Add(-Lease - time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if err := seedRequests(w, id, base.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	// Counts the reconciles that get written, past what any reader sees.
	count := `CREATE TABLE closes (id TEXT);
		CREATE TRIGGER count_closes AFTER UPDATE OF status ON runs WHEN NEW.status = 'interrupted'
		BEGIN INSERT INTO closes VALUES (NEW.id); END;`
	if w.d.pg {
		count = `CREATE TABLE closes (id TEXT);
		CREATE FUNCTION count_closes() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO closes VALUES (NEW.id); RETURN NULL; END $$;
		CREATE TRIGGER count_closes AFTER UPDATE OF status ON runs FOR EACH ROW
			WHEN (NEW.status = 'interrupted') EXECUTE FUNCTION count_closes();`
	}
	if _, err := w.w.DB.Exec(count); err != nil {
		t.Fatal(err)
	}
	closes := func(id string) int {
		t.Helper()
		var n int
		if err := w.r.QueryRow(`SELECT count(*) FROM closes WHERE id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const readers = 8
	ls := make([]*Ledger, readers)
	for i := range ls {
		ls[i] = o.as(Owner{}, base, i%2 == 0) // as separate processes: half read-only, half writers
	}

	// Two processes that both saw s running, and write one after the other.
	seen, err := ls[0].findRun("s")
	if err != nil {
		t.Fatal(err)
	}
	first, err1 := ls[0].interrupt(context.Background(), seen, "gone")
	second, err2 := ls[1].interrupt(context.Background(), seen, "gone")
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if n := closes("s"); n != 1 || first.Status != RunInterrupted || !reflect.DeepEqual(first, second) {
		t.Errorf("closed %d times; the two read %+v and %+v", n, first, second)
	}

	// All at once, through Runs and Requests.
	var wg sync.WaitGroup
	got := make([]RunRow, readers)
	errs := make([]error, readers)
	start := make(chan struct{})
	for i, l := range ls {
		wg.Go(func() {
			<-start
			runs, err := l.Runs(0)
			if err == nil {
				for _, r := range runs {
					if r.ID == "r" {
						got[i] = r
					}
				}
				var reqs []Request
				if reqs, err = l.Requests("r"); err == nil && anyOpen(reqs) {
					err = fmt.Errorf("open requests after the read: %+v", reqs)
				}
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for i := range ls {
		if errs[i] != nil {
			t.Errorf("reader %d: %v", i, errs[i])
		}
		if got[i].Status != RunInterrupted || !reflect.DeepEqual(got[i], got[0]) {
			t.Errorf("reader %d read %+v, reader 0 %+v", i, got[i], got[0])
		}
	}
	if n := closes("r"); n != 1 {
		t.Errorf("the run was closed %d times, want once", n)
	}
}

func TestAReaderThatCannotWriteShowsTheRunInterruptedAnyway(t *testing.T) {
	t.Parallel()
	sqliteOnly(t) // BEGIN IMMEDIATE holds the whole file
	base := time.UnixMilli(time.Now().UnixMilli())
	o := newOwners(t)
	w := o.as(Owner{}, base, false)
	beat := base.Add(-Lease - time.Minute)
	if err := w.CreateRun(RunRow{ID: "r", Status: RunRunning, Owner: Owner{PID: 1, Host: "elsewhere"}, Heartbeat: beat}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(w, "r", base.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Another process holds the write lock for longer than a reconcile waits.
	conn, err := w.w.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	r := o.as(Owner{}, base, true)
	r.fixBusyMS = 200 // what it waits is not what is tested
	run, err := r.Run("r")
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunInterrupted || !run.EndedAt.Equal(beat) || !strings.Contains(run.Message, "elsewhere") {
		t.Errorf("read %s ended %v (%q); want interrupted at %v", run.Status, run.EndedAt, run.Message, beat)
	}
	reqs, err := r.Requests("r")
	if err != nil {
		t.Fatal(err)
	}
	if anyOpen(reqs) {
		t.Errorf("requests read open: %+v", reqs)
	}
	if s := rawRunStatus(t, r.r, "r"); s != RunRunning {
		t.Fatalf("stored %q while another process held the lock", s)
	}
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	// Once the lock is free, the next read writes it.
	if _, err := r.Runs(0); err != nil {
		t.Fatal(err)
	}
	if s := rawRunStatus(t, r.r, "r"); s != RunInterrupted {
		t.Errorf("stored %q after the lock was released, want interrupted", s)
	}
}

func TestMigrationGivesRunsFromBeforeHeartbeatsTheirLastSignOfLife(t *testing.T) {
	t.Parallel()
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sqliteMigrations[:2] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatal(err)
		}
	}
	now := time.UnixMilli(time.Now().UnixMilli())
	lastDead := now.Add(-time.Hour)
	msAgo := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	_, err = db.Exec(`PRAGMA user_version = 2;
		INSERT INTO runs (id, status, started_ms) VALUES
			('dead', 'running', ?1), ('live', 'running', ?2), ('done', 'completed', ?1), ('bare', 'running', NULL);
		INSERT INTO requests (run_id, purpose, status, queued_ms, started_ms, ended_ms) VALUES
			('dead', 'inference', 'completed', ?1, ?1, ?3),
			('dead', 'inference', 'running', ?1, ?1, NULL),
			('live', 'inference', 'running', ?2, ?4, NULL);`,
		msAgo(2*time.Hour), msAgo(time.Hour), lastDead.UnixMilli(), msAgo(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	runs, err := l.Runs(0)
	if err != nil {
		t.Fatal(err)
	}
	if dead := findRun(t, runs, "dead"); dead.Status != RunInterrupted || !dead.EndedAt.Equal(lastDead) {
		t.Errorf("a run left running an hour ago: %s, ended %v; want interrupted at %v", dead.Status, dead.EndedAt, lastDead)
	}
	if st := rawStatuses(t, l.r, "dead"); st[StatusRunning] != 0 || st[StatusInterrupted] != 1 {
		t.Errorf("its requests: %v", st)
	}
	for id, want := range map[string]string{"live": RunRunning, "done": "completed", "bare": RunRunning} {
		if got := findRun(t, runs, id); got.Status != want {
			t.Errorf("run %s: %s, want %s", id, got.Status, want)
		}
	}
}
