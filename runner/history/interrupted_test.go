package history

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func TestLoadSnapshotShowsARunWhoseProcessDiedAsInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	w, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	beat := time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli())
	// Run by a process on another host that fell silent an hour ago.
	run := ledger.RunRow{ID: "r", Status: ledger.RunRunning, Models: []string{"m"}, Tests: []string{"t1", "t2", "t3"},
		Repeat: 1, StartedAt: beat.Add(-time.Minute), Owner: ledger.Owner{PID: 1, Host: "elsewhere"}, Heartbeat: beat}
	if err := w.CreateRun(run); err != nil {
		t.Fatal(err)
	}
	for test, status := range map[string]string{"t1": "completed", "t2": "pending", "t3": "running"} {
		if err := w.PutCell(ledger.CellRow{RunID: "r", Model: "m", Test: test, Status: status, Output: "out " + test}); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := ledger.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	b, err := LoadSnapshot(ro, "last", "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != state.RunStatus(ledger.RunInterrupted) || !b.Ended.Equal(beat) {
		t.Errorf("run reads %s, ended %v; want interrupted at its last heartbeat %v", b.Status, b.Ended, beat)
	}
	want := map[string]state.CellStatus{"t1": state.Completed, "t2": state.Cancelled, "t3": state.Cancelled}
	for _, row := range b.Rows {
		c := row.Cells[0]
		if c.Status != want[c.Test] {
			t.Errorf("cell %s: %s, want %s", c.Test, c.Status, want[c.Test])
		}
		if c.Status == state.Cancelled && !strings.Contains(c.Said().Error, "interrupted") {
			t.Errorf("cell %s cancelled without saying why: %q", c.Test, c.Said().Error)
		}
		if c.Said().Output != "out "+c.Test {
			t.Errorf("cell %s lost its output: %q", c.Test, c.Said().Output)
		}
	}
	if b.Counts.Cancelled != 2 || b.Counts.Completed != 1 {
		t.Errorf("counts %+v, want 1 completed and 2 cancelled", b.Counts)
	}
}
