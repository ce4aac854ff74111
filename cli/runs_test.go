package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pitwall/runner/ledger"
)

func TestRunsInANewFolderSaysNoRunsYet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, stderr := pitwall(t, dir, nil, "runs")
	if code != 0 || !strings.Contains(out, "no runs yet") {
		t.Errorf("runs in a new folder: exit %d, stdout %q, stderr %q; want 0 and \"no runs yet\"", code, out, stderr)
	}
	code, out, _ = pitwall(t, dir, nil, "runs", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("runs --json in a new folder: exit %d, %q; want 0 and []", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pitwall")); err == nil {
		t.Error("runs made a ledger folder where there was none")
	}
}

// Each demo run's line counts its cells as its export does.
func TestRunsCountsEachRunsOutcomes(t *testing.T) {
	t.Parallel()
	db, a := demoRun(t, 1)
	_, b := demoRun(t, 2)
	code, out, stderr := inproc(t, "runs", "--db", db, "--json", "-n", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var runs []runSummary
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	seen := 0
	for _, r := range runs {
		if r.ID != a && r.ID != b {
			continue
		}
		seen++
		cells, outcomes := demoOutcomes(t, db, r.ID)
		if r.Status != "completed" || r.Models != 5 || r.Tests != 16 || r.Cells != cells || r.Judge != "large" {
			t.Errorf("%s: %s, %d×%d = %d cells, judge %q; want completed, 5×16 = %d, large", r.ID, r.Status, r.Models, r.Tests, r.Cells, r.Judge, cells)
		}
		if r.Pass != outcomes["pass"] || r.Fail != outcomes["fail"] || r.Warn != outcomes["warn"] ||
			r.Error != outcomes["error"] || r.JudgeError != outcomes["judge-error"] {
			t.Errorf("%s: pass %d fail %d warn %d error %d judge-error %d; the export says %v", r.ID, r.Pass, r.Fail, r.Warn, r.Error, r.JudgeError, outcomes)
		}
		if r.PassRate == nil || *r.PassRate != float64(r.Pass)/float64(r.Decided) || r.Decided != r.Pass+r.Fail+r.Warn+r.Error {
			t.Errorf("%s: pass rate %v over %d decided", r.ID, r.PassRate, r.Decided)
		}
		if r.ExitCode == nil || *r.ExitCode != 1 || r.DurationMS == nil {
			t.Errorf("%s: exit code %v, duration %v; want 1 (the demo has failures) and a duration", r.ID, r.ExitCode, r.DurationMS)
		}
	}
	if seen != 2 {
		t.Fatalf("runs lists %d of the two demo runs:\n%s", seen, out)
	}
	code, table, _ := inproc(t, "runs", "--db", db)
	for _, want := range []string{"PASS", "FAIL", "WARN", "ERR", "RATE", "JUDGE", "EXIT", a, "5×16", "large"} {
		if code != 0 || !strings.Contains(table, want) {
			t.Errorf("the table lacks %q (exit %d):\n%s", want, code, table)
		}
	}
	checkRunsBy(t, db, runs, table)
}

// checkRunsBy checks that `runs` (its JSON and its table) says each run
// was run by this process's user on this host.
func checkRunsBy(t *testing.T, db string, runs []runSummary, table string) {
	t.Helper()
	led, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	me := led.Self()
	led.Close()
	if me.User == "" || me.Host == "" {
		t.Fatalf("this process's owner names no user or host: %+v", me)
	}
	for _, r := range runs {
		if r.User != me.User || r.Host != me.Host {
			t.Errorf("run %s: user %q, host %q; want %q, %q", r.ID, r.User, r.Host, me.User, me.Host)
		}
	}
	for _, want := range []string{"BY", me.User + "@" + me.Host} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

// A run whose process died reads interrupted, with no exit code: nobody
// finished it.
func TestRunsShowsAnInterruptedRun(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "ledger.db")
	led, err := ledger.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	started := time.Now().Add(-time.Minute)
	id := ledger.NewRunID(started)
	if err := led.CreateRun(ledger.RunRow{ID: id, Name: "gone", Status: ledger.RunRunning, ScoringMode: "deterministic",
		Models: []string{"m"}, Tests: []string{"t"}, Repeat: 1, StartedAt: started,
		Owner: ledger.Owner{PID: dead.ProcessState.Pid(), Host: host}, Heartbeat: started}); err != nil {
		t.Fatal(err)
	}
	if err := led.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := inproc(t, "runs", "--db", db, "--json")
	var runs []runSummary
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 {
		t.Fatalf("exit %d, stderr %q:\n%s", code, stderr, out)
	}
	if r := runs[0]; r.Status != ledger.RunInterrupted || r.ExitCode != nil || r.Cells != 1 {
		t.Errorf("%s: status %s, exit code %v, %d cells; want interrupted, none, 1", r.ID, r.Status, r.ExitCode, r.Cells)
	}
	code, table, _ := inproc(t, "runs", "--db", db)
	if code != 0 || !strings.Contains(table, "interrupted") {
		t.Errorf("exit %d:\n%s", code, table)
	}
}
