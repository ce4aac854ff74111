package ledger

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestHeartbeatTakesBackARunClosedWhileItsProcessWasStalled(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	o := newOwners(t)
	a := o.as(Owner{}, base, false)
	if err := a.CreateRun(RunRow{ID: "r", Status: RunRunning, Owner: a.Self(), Heartbeat: base}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(a, "r", base); err != nil {
		t.Fatal(err)
	}
	before, err := a.Requests("r")
	if err != nil {
		t.Fatal(err)
	}
	// Another host's reader finds it silent for too long.
	b := o.as(Owner{PID: 1, Host: "host-b"}, base.Add(Lease+time.Second), true)
	if run, err := b.Run("r"); err != nil || run.Status != RunInterrupted {
		t.Fatalf("the other host's read: %+v, %v; want interrupted", run, err)
	}
	if err := a.Heartbeat("r", base.Add(Lease+2*time.Second)); err != nil {
		t.Fatal(err)
	}
	run, err := a.findRun("r")
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunRunning || !run.EndedAt.IsZero() || run.Message != "" {
		t.Errorf("after the owner's heartbeat: %s, ended %v, %q; want running again", run.Status, run.EndedAt, run.Message)
	}
	after, err := a.Requests("r")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("requests not as they were:\n got %+v\nwant %+v", after, before)
	}

	// After the end, a late tick changes nothing.
	if err := a.FinishRun("r", "completed", "", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := a.Heartbeat("r", base.Add(2*time.Hour)); err != nil {
		t.Errorf("a heartbeat after the end: %v", err)
	}
	if run, _ := a.findRun("r"); run.Status != "completed" || !run.Heartbeat.Equal(base.Add(Lease+2*time.Second)) {
		t.Errorf("a heartbeat after the end moved the run: %s, heartbeat %v", run.Status, run.Heartbeat)
	}
	if err := a.Heartbeat("nope", base); !errors.Is(err, ErrNotFound) {
		t.Errorf("Heartbeat of an unknown run: %v, want ErrNotFound", err)
	}
}

func TestResumeRunTakesOverOnlyARunNoLiveProcessHolds(t *testing.T) {
	t.Parallel()
	base := ms("2026-11-23T12:00:00Z")
	o := newOwners(t)
	a := o.as(Owner{}, base, false)
	if err := a.CreateRun(RunRow{ID: "20261123-120000-abcd", Status: RunRunning, StartedAt: base, Owner: a.Self(), Heartbeat: base}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(a, "20261123-120000-abcd", base); err != nil {
		t.Fatal(err)
	}
	const id = "20261123-120000-abcd"

	// While a's heartbeat is fresh, nobody else may take it.
	early := o.as(Owner{PID: 5, Host: "host-c"}, base.Add(Lease), false)
	if _, err := early.ResumeRun(id, base.Add(Lease)); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), a.Self().String()) {
		t.Fatalf("ResumeRun of a live run: %v; want ErrHeld naming %s", err, a.Self())
	}

	// Once a is silent, c takes it by a prefix, as `pitwall resume 2026…` would.
	at := base.Add(Lease + time.Second)
	c := o.as(Owner{PID: 4242, Host: "host-c"}, at, false)
	run, err := c.ResumeRun("20261123-12", at)
	if err != nil {
		t.Fatal(err)
	}
	want := RunRow{ID: id, Status: RunRunning, StartedAt: base, Owner: Owner{PID: 4242, Host: "host-c"}, Heartbeat: at, Generation: 1,
		Models: []string(nil), Tests: []string(nil)}
	if !reflect.DeepEqual(run, want) {
		t.Errorf("resumed:\n got %+v\nwant %+v", run, want)
	}
	if stored, err := c.findRun(id); err != nil || !reflect.DeepEqual(stored, want) {
		t.Errorf("stored:\n got %+v, %v\nwant %+v", stored, err, want)
	}
	if open, err := c.OpenRequests(id); err != nil || len(open) != 0 {
		t.Errorf("requests left open by the process before: %+v, %v", open, err)
	}
	if again, err := c.ResumeRun(id, at.Add(time.Second)); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("c resuming its own run again: %+v, %v", again, err)
	}

	// a comes back: it must stop, and cannot take the run back.
	if err := a.Heartbeat(id, at.Add(time.Second)); !errors.Is(err, ErrTakenOver) || !strings.Contains(err.Error(), "pid 4242 on host-c") {
		t.Errorf("a's heartbeat after c resumed: %v; want ErrTakenOver naming c", err)
	}
	if err := c.Heartbeat(id, at.Add(time.Second)); err != nil {
		t.Errorf("c's heartbeat: %v", err)
	}
	d := o.as(Owner{PID: 6, Host: "host-d"}, at.Add(2*time.Second), false)
	if _, err := d.ResumeRun(id, at.Add(2*time.Second)); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "pid 4242 on host-c") {
		t.Errorf("ResumeRun of c's run: %v; want ErrHeld naming c", err)
	}

	// A finished run can be taken again (a retry into the same run).
	if err := c.FinishRun(id, "completed", "", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if run, err := d.ResumeRun(id, at.Add(2*time.Minute)); err != nil || run.Owner != d.Self() || run.Status != RunRunning {
		t.Errorf("ResumeRun of a completed run: %+v, %v", run, err)
	}

	if _, err := c.ResumeRun("nope", at); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResumeRun of an unknown run: %v, want ErrNotFound", err)
	}
	ro := o.as(Owner{}, at, true)
	if _, err := ro.ResumeRun(id, at); !errors.Is(err, ErrReadOnly) {
		t.Errorf("ResumeRun on a read-only ledger: %v, want ErrReadOnly", err)
	}
	if err := ro.Heartbeat(id, at); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Heartbeat on a read-only ledger: %v, want ErrReadOnly", err)
	}
}

func TestResumeRunRefusesARunThatKeepsNoHeartbeat(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	if err := l.CreateRun(RunRow{ID: "r", Status: RunRunning}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ResumeRun("r", time.Now()); !errors.Is(err, ErrHeld) {
		t.Errorf("ResumeRun of a running run nothing shows dead: %v, want ErrHeld", err)
	}
}
