package runner

import (
	"context"
	"testing"
	"time"

	"pitwall/gpu/simspec"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func TestRunDecidesEveryCellAndRecordsEveryRequest(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet+`
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`)
	h := newHarness(t, cfg, true)
	b := h.finish(t)

	if b.Status != state.RunCompleted || b.Phase != state.PhaseDone {
		t.Fatalf("status %s phase %s, want completed/done", b.Status, b.Phase)
	}
	for ti := range b.Tests {
		for mi, m := range b.Models {
			c := b.Cell(ti, mi, 0)
			want := state.Completed
			if m == "bad" {
				want = state.Failed
			}
			if c.Status != want {
				t.Errorf("%s × %s: status %s, want %s (checks %+v)", m, c.Test, c.Status, want, c.Said().Checks)
			}
			if c.Status == state.Completed {
				j := c.Judgment("j")
				if j == nil || j.Status != state.JudgmentDone || j.Verdict != scoring.Pass {
					t.Errorf("%s × %s: judgment %+v, want a PASS", m, c.Test, j)
				}
				if c.CompletionTokens == 0 || c.Latency <= 0 && c.Server == "" {
					t.Errorf("%s × %s: no usage or server recorded: %+v", m, c.Test, c)
				}
			}
		}
	}
	x := h.export(t)
	inference, judged := 0, 0
	for _, q := range x.Requests {
		switch q.Status {
		case ledger.StatusCompleted, ledger.StatusError, ledger.StatusCanceled:
		default:
			t.Errorf("request %d left %s", q.ID, q.Status)
		}
		if q.Purpose == ledger.PurposeInference {
			inference++
			if q.Status == ledger.StatusCompleted && q.CompletionTokens == 0 {
				t.Errorf("request %d completed without tokens", q.ID)
			}
		}
		if q.Purpose == ledger.PurposeJudge {
			judged++
		}
	}
	cells := len(b.Tests) * len(b.Models)
	if inference != cells {
		t.Errorf("%d inference requests for %d cells", inference, cells)
	}
	if judged != b.Counts.Completed {
		t.Errorf("%d judge requests for %d completed cells", judged, b.Counts.Completed)
	}
	if x.Run.Status != "completed" || x.Run.EndedAt == nil {
		t.Errorf("export run = %+v", x.Run)
	}
	if got := x.Summary.ByVerdict["pass"]; got != b.Counts.Completed {
		t.Errorf("export has %d pass verdicts, want %d", got, b.Counts.Completed)
	}
	if state.ExitCode(b, false) != state.ExitFail {
		t.Errorf("exit code %d with failed cells, want 1", state.ExitCode(b, false))
	}
}

func TestStopCancelsInFlightAndLeavesNothingOpen(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet)
	cfg.Servers[0].Sim = &simspec.Server{Faults: simspec.Faults{HangRate: 1}}
	h := newHarness(t, cfg, true)
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until requests are on the wire, then stop.
	for s := range h.run.Snapshots() {
		if s.Counts.Running > 0 {
			break
		}
	}
	h.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := h.run.Wait(ctx)
	if b.Status != state.RunStopped {
		t.Fatalf("status %s, want stopped", b.Status)
	}
	if n := b.Counts.Cancelled; n != len(b.Tests)*len(b.Models) {
		t.Errorf("%d cells cancelled, want all %d (%+v)", n, len(b.Tests)*len(b.Models), b.Counts)
	}
	x := h.export(t)
	if x.Run.Status != "stopped" {
		t.Errorf("ledger run status %q, want stopped", x.Run.Status)
	}
	for _, q := range x.Requests {
		if q.Status == ledger.StatusQueued || q.Status == ledger.StatusRunning {
			t.Errorf("request %d left %s after stop", q.ID, q.Status)
		}
	}
	for _, c := range x.Cells {
		if c.Status != "cancelled" {
			t.Errorf("cell %s × %s is %s in the ledger, want cancelled", c.Model, c.Test, c.Status)
		}
	}
}

func TestSlowReaderGetsTheFinalSnapshot(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet)
	h := newHarness(t, cfg, true)
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	<-h.run.Done() // read nothing until the run is over
	var last *state.BatteryRun
	select {
	case last = <-h.run.Snapshots():
	case <-time.After(5 * time.Second):
		t.Fatal("no snapshot waiting after the run ended")
	}
	if !last.Final || last.Counts.Done() != len(last.Tests)*len(last.Models) {
		t.Fatalf("first snapshot read after the end is not the final one: final=%v counts=%+v", last.Final, last.Counts)
	}
}

func TestSnapshotsNeverGoBackwards(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet)
	h := newHarness(t, cfg, true)
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	var seq uint64
	done := 0
	for s := range h.run.Snapshots() {
		if s.Seq <= seq {
			t.Fatalf("snapshot %d after %d", s.Seq, seq)
		}
		if s.Counts.Done() < done {
			t.Fatalf("done cells went from %d to %d", done, s.Counts.Done())
		}
		seq, done = s.Seq, s.Counts.Done()
		if s.Final {
			break
		}
	}
}

func TestUnchangedRowsKeepTheirPointer(t *testing.T) {
	t.Parallel()
	tbl := newCellTable([]string{"a", "b"}, []string{"m"}, 1)
	first := tbl.publish()
	tbl.edit(posOf(1, 0, 0)).Status = state.Running
	second := tbl.publish()
	if first[0] != second[0] {
		t.Error("row 0 did not change but was copied")
	}
	if first[1] == second[1] {
		t.Error("row 1 changed in place after being published")
	}
	if first[1].Cells[0].Status != state.Pending {
		t.Errorf("a published row was mutated: %s", first[1].Cells[0].Status)
	}
}

// A change copies the row's pointers and the one cell it changes: the
// cells it did not touch are the published ones, and a cell changed twice
// between snapshots is copied once.
func TestAChangedCellIsCopiedAlone(t *testing.T) {
	t.Parallel()
	tbl := newCellTable([]string{"a"}, []string{"m0", "m1", "m2"}, 1)
	first := tbl.publish()
	c := tbl.edit(posOf(0, 1, 0))
	c.Status = state.Running
	if again := tbl.edit(posOf(0, 1, 0)); again != c {
		t.Error("a cell changed twice before a snapshot was copied twice")
	}
	second := tbl.publish()
	if first[0].Cells[1].Status != state.Pending || second[0].Cells[1].Status != state.Running {
		t.Fatalf("statuses %s then %s, want pending then running", first[0].Cells[1].Status, second[0].Cells[1].Status)
	}
	for _, i := range []int{0, 2} {
		if first[0].Cells[i] != second[0].Cells[i] {
			t.Errorf("cell %d did not change but was copied", i)
		}
	}
	tbl.edit(posOf(0, 1, 0)).Status = state.Completed
	if second[0].Cells[1].Status != state.Running {
		t.Error("a published cell was changed in place")
	}
}
