package ledger

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// dump is what the file holds of a run, past any view: its row, its
// requests, cells and verdicts, as text to compare.
func dump(t *testing.T, db db, run string) string {
	t.Helper()
	var sb strings.Builder
	for _, q := range []string{
		`SELECT status, pid, host, heartbeat_ms, ended_ms, message, generation, exit_code, scoring_mode FROM runs WHERE id = ?`,
		`SELECT id, status, server, started_ms, ended_ms FROM requests WHERE run_id = ? ORDER BY id`,
		`SELECT model, test, repeat, status FROM cells WHERE run_id = ? ORDER BY rowid`,
		`SELECT model, test, repeat, judge, verdict FROM verdicts WHERE run_id = ? ORDER BY rowid`,
	} {
		rows, err := db.Query(q, run)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&sb, vals...)
		}
		rows.Close()
	}
	return sb.String()
}

func TestEveryWriteOfASupersededOwnerIsRefused(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	o := newOwners(t)
	a := o.as(Owner{PID: 111, Host: "host-a"}, base, false)
	if err := a.CreateRun(RunRow{ID: "r", Status: RunRunning, StartedAt: base, Owner: a.Self(), Heartbeat: base}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(a, "r", base); err != nil {
		t.Fatal(err)
	}
	open, err := a.OpenRequests("r")
	if err != nil || len(open) == 0 {
		t.Fatalf("open requests: %v, %v", open, err)
	}
	if err := a.PutCell(CellRow{RunID: "r", Model: "m", Test: "t1", Status: "completed", Output: "kept"}); err != nil {
		t.Fatal(err)
	}

	// a stops; host-b finds it silent past its lease and takes it over.
	at := base.Add(Lease + time.Second)
	b := o.as(Owner{PID: 222, Host: "host-b"}, at, false)
	run, err := b.ResumeRun("r", at)
	if err != nil {
		t.Fatal(err)
	}
	if run.Generation != 1 {
		t.Errorf("generation after the take-over %d, want 1", run.Generation)
	}
	before := dump(t, b.r, "r")

	// a wakes: every write it makes of the run is refused, synchronous or
	// queued, and says who holds the run now.
	req := open[0]
	req.Status, req.Output, req.EndedAt = StatusCompleted, "late", at
	writes := []struct {
		name  string
		write func(ack Ack) error
	}{
		{"Heartbeat", func(Ack) error { return a.Heartbeat("r", at) }},
		{"InsertRequests", func(Ack) error {
			return a.InsertRequests([]*Request{{RunID: "r", Purpose: PurposeInference, Model: "m", Test: "t9"}})
		}},
		{"QueueInserts", func(ack Ack) error {
			a.QueueInserts([]*Request{{RunID: "r", Purpose: PurposeInference, Model: "m", Test: "t9"}}, ack)
			return nil
		}},
		{"QueueInsert", func(ack Ack) error {
			a.QueueInsert(Request{RunID: "r", Purpose: PurposeJudge, Model: "judge", Status: StatusCompleted}, ack)
			return nil
		}},
		{"StartRequest", func(Ack) error { return a.StartRequest(open[0].ID, "gpu1", at) }},
		{"QueueStart", func(ack Ack) error { a.QueueStart(open[0].ID, "gpu1", at, ack); return nil }},
		{"FinishRequest", func(Ack) error { r := req; return a.FinishRequest(&r) }},
		{"QueueFinish without a run id", func(ack Ack) error { r := req; r.RunID = ""; a.QueueFinish(&r, ack); return nil }},
		{"PutCell", func(Ack) error {
			return a.PutCell(CellRow{RunID: "r", Model: "m", Test: "t1", Status: "cancelled"})
		}},
		{"QueueCell", func(ack Ack) error {
			a.QueueCell(CellRow{RunID: "r", Model: "m", Test: "t3", Status: "cancelled"}, ack)
			return nil
		}},
		{"PutVerdict", func(Ack) error {
			return a.PutVerdict(VerdictRow{RunID: "r", Model: "m", Test: "t1", Judge: "j", Verdict: "fail"})
		}},
		{"QueueVerdict", func(ack Ack) error {
			a.QueueVerdict(VerdictRow{RunID: "r", Model: "m", Test: "t1", Judge: "j", Verdict: "fail"}, ack)
			return nil
		}},
		{"CancelOpen", func(Ack) error { _, err := a.CancelOpen("r", at); return err }},
		{"SetScoring", func(Ack) error { return a.SetScoring("r", "checks", "") }},
		{"FinishRun", func(Ack) error { return a.FinishRun("r", "failed", "stopped", at) }},
		{"SetExitCode", func(Ack) error { return a.SetExitCode("r", 2) }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			acked := make(chan error, 1)
			err := w.write(func(err error) { acked <- err })
			if err == nil {
				if ferr := a.Flush(); ferr == nil {
					t.Fatal("Flush after a refused queued write returned nil")
				}
				err = <-acked
			}
			var taken *TakenOverError
			if !errors.As(err, &taken) || !errors.Is(err, ErrTakenOver) || taken.By != b.Self() || !strings.Contains(err.Error(), "pid 222 on host-b") {
				t.Errorf("%s after the take-over: %v; want ErrTakenOver naming pid 222 on host-b", w.name, err)
			}
			if after := dump(t, b.r, "r"); after != before {
				t.Errorf("%s changed the run:\nbefore\n%s\nafter\n%s", w.name, before, after)
			}
		})
	}

	// The new owner writes as usual, and other runs of a are not fenced.
	if err := b.Heartbeat("r", at.Add(time.Second)); err != nil {
		t.Errorf("the new owner's heartbeat: %v", err)
	}
	if err := b.PutCell(CellRow{RunID: "r", Model: "m", Test: "t3", Status: "completed"}); err != nil {
		t.Errorf("the new owner's cell: %v", err)
	}
	if err := a.CreateRun(RunRow{ID: "other", Status: RunRunning, Owner: a.Self(), Heartbeat: at}); err != nil {
		t.Fatal(err)
	}
	if err := a.PutCell(CellRow{RunID: "other", Model: "m", Test: "t1", Status: "completed"}); err != nil {
		t.Errorf("a's write of its other run, in the batch after a refused one: %v", err)
	}
}

func TestAnOwnerThatWakesAfterItsLeaseTakesItsRunBackOnItsFirstWrite(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	o := newOwners(t)
	a := o.as(Owner{PID: 111, Host: "host-a"}, base, false)
	if err := a.CreateRun(RunRow{ID: "r", Status: RunRunning, StartedAt: base, Owner: a.Self(), Heartbeat: base}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(a, "r", base); err != nil {
		t.Fatal(err)
	}
	queued, err := a.OpenRequests("r")
	if err != nil || len(queued) == 0 || queued[0].Status != StatusQueued {
		t.Fatalf("open requests: %+v, %v; want a queued one first", queued, err)
	}
	// host-b reads it past the lease: interrupted, its requests closed.
	b := o.as(Owner{PID: 222, Host: "host-b"}, base.Add(Lease+time.Second), true)
	if run, err := b.Run("r"); err != nil || run.Status != RunInterrupted {
		t.Fatalf("host-b's read: %+v, %v; want interrupted", run, err)
	}
	// a wakes and starts a request it had queued, before any heartbeat: the
	// start takes the run back, and the request is running, not refused.
	acked := make(chan error, 1)
	a.QueueStart(queued[0].ID, "gpu1", base.Add(Lease+2*time.Second), func(err error) { acked <- err })
	if err := a.Flush(); err != nil {
		t.Fatalf("the start after the lease lapsed: %v", err)
	}
	if err := <-acked; err != nil {
		t.Fatalf("the start's ack: %v", err)
	}
	run, err := a.findRun("r")
	if err != nil || run.Status != RunRunning || !run.EndedAt.IsZero() || run.Generation != 0 {
		t.Errorf("after a's start: %+v, %v; want running again at generation 0", run, err)
	}
	if got := rawStatuses(t, a.r, "r"); got[StatusInterrupted] != 0 || got[StatusRunning] != 2 {
		t.Errorf("request statuses after a took the run back: %v; want none interrupted, two running", got)
	}
}

// An owner that reads the same as the one before it (a container's pid 1
// on the same host name, say) is still fenced: by the generation alone,
// since every owner field compares equal. Catches the mutation that drops
// `cur.Generation != h.gen` from fence's check.
func TestATakeOverByAnOwnerThatReadsTheSameIsFencedByTheGeneration(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	same := Owner{PID: 1, Host: "box", Start: "boot/7", User: "ci"}
	o := newOwners(t)
	a := o.as(same, base, false)
	if err := a.CreateRun(RunRow{ID: "r", Status: RunRunning, StartedAt: base, Owner: a.Self(), Heartbeat: base}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(a, "r", base); err != nil {
		t.Fatal(err)
	}
	open, err := a.OpenRequests("r")
	if err != nil || len(open) == 0 {
		t.Fatalf("open requests: %v, %v", open, err)
	}
	// a's process ends (as pid 1 of a container that stops), and the
	// container's next pid 1, reading the same, resumes the run. The held
	// tokens are this process's, shared here by a and b: b starts holding
	// nothing, as its own process would.
	at := base.Add(Lease + time.Second)
	b := o.as(same, at, false)
	b.gone = func(Owner) (string, bool) { return "has exited", true }
	a.release("r")
	run, err := b.ResumeRun("r", at)
	if err != nil || run.Generation != 1 || run.Owner != a.Self() {
		t.Fatalf("the take-over: %+v, %v; want generation 1 under the same owner", run, err)
	}
	before := dump(t, b.r, "r")

	// a's process still holds the token it had: generation 0.
	a.hold("r", 0)
	req := open[0]
	req.Status, req.Output, req.EndedAt = StatusCompleted, "late", at
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"Heartbeat", func() error { return a.Heartbeat("r", at) }},
		{"StartRequest", func() error { return a.StartRequest(open[0].ID, "gpu1", at) }},
		{"FinishRequest", func() error { r := req; return a.FinishRequest(&r) }},
		{"PutCell", func() error {
			return a.PutCell(CellRow{RunID: "r", Model: "m", Test: "t1", Status: "completed", Output: "late"})
		}},
		{"FinishRun", func() error { return a.FinishRun("r", "completed", "", at) }},
	} {
		if err := w.write(); !errors.Is(err, ErrTakenOver) {
			t.Errorf("%s of the owner before, after a take-over by one that reads the same: %v; want ErrTakenOver", w.name, err)
		}
	}
	if after := dump(t, b.r, "r"); after != before {
		t.Errorf("the owner before changed the run:\nbefore\n%s\nafter\n%s", before, after)
	}

	// The new owner, at generation 1, writes as usual.
	b.hold("r", 1)
	if err := b.PutCell(CellRow{RunID: "r", Model: "m", Test: "t1", Status: "completed"}); err != nil {
		t.Errorf("the new owner's cell: %v", err)
	}
}
