package ledger

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// A workstation's SQLite ledger copied into this pass's backend (into
// PostgreSQL on its pass): every run whole, a second copy adds nothing,
// and a run still running is left for later.
func TestCopyMovesWholeRunsOnceAndLeavesRunningOnes(t *testing.T) {
	t.Parallel()
	src, err := Open(filepath.Join(t.TempDir(), "workstation.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	at := ms("2026-03-01T10:00:00.123Z")
	for _, id := range []string{"r1", "r2"} {
		if err := src.CreateRun(RunRow{ID: id, Name: "n " + id, Status: RunRunning, Models: []string{"m"}, Tests: []string{"t1", "t2"},
			Repeat: 1, StartedAt: at, ConfigJSON: `{"a":1}`}); err != nil {
			t.Fatal(err)
		}
		if err := seedRequests(src, id, at); err != nil {
			t.Fatal(err)
		}
		if _, err := src.CancelOpen(id, at); err != nil {
			t.Fatal(err)
		}
		if err := src.PutCell(CellRow{RunID: id, Model: "m", Test: "t1", Repeat: 0, Status: "completed", Output: "a reply\nof two lines", TTFT: 1500 * time.Microsecond}); err != nil {
			t.Fatal(err)
		}
		if err := src.PutVerdict(VerdictRow{RunID: id, Model: "m", Test: "t1", Judge: "j", Verdict: "PASS", Score: 1, Detail: "good", At: at}); err != nil {
			t.Fatal(err)
		}
		if err := src.FinishRun(id, "completed", "", at.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := src.SetExitCode(id, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.CreateRun(RunRow{ID: "live", Status: RunRunning, StartedAt: at, Owner: src.Self(), Heartbeat: time.Now()}); err != nil {
		t.Fatal(err)
	}
	dst := openTest(t)
	res, err := Copy(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Copied, []string{"r1", "r2"}) || !reflect.DeepEqual(res.Running, []string{"live"}) || res.Requests != 12 {
		t.Fatalf("first copy = %+v", res)
	}
	for _, id := range []string{"r1", "r2"} {
		a, _ := src.Run(id)
		b, err := dst.Run(id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("run %s:\n src %+v\n dst %+v", id, a, b)
		}
		ra, _ := src.Requests(id)
		rb, _ := dst.Requests(id)
		if len(ra) != len(rb) {
			t.Fatalf("run %s: %d requests copied of %d", id, len(rb), len(ra))
		}
		for i := range ra {
			ra[i].ID, rb[i].ID = 0, 0
			if !reflect.DeepEqual(ra[i], rb[i]) {
				t.Errorf("run %s request %d:\n src %+v\n dst %+v", id, i, ra[i], rb[i])
			}
		}
		ca, _ := src.Cells(id)
		cb, _ := dst.Cells(id)
		va, _ := src.Verdicts(id)
		vb, _ := dst.Verdicts(id)
		if !reflect.DeepEqual(ca, cb) || !reflect.DeepEqual(va, vb) {
			t.Errorf("run %s: cells or verdicts differ:\n%+v\n%+v\n%+v\n%+v", id, ca, cb, va, vb)
		}
	}
	again, err := Copy(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Copied) != 0 || again.Requests != 0 || !reflect.DeepEqual(again.Present, []string{"r1", "r2"}) {
		t.Errorf("second copy = %+v, want nothing copied", again)
	}
	if reqs, _ := dst.Requests("r1"); len(reqs) != 6 {
		t.Errorf("after a second copy run r1 has %d requests, want 6", len(reqs))
	}
}
