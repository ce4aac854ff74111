package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Resuming a run that completed says there is nothing to resume, exits 0,
// and sends nothing: the run's end, duration and requests stay as they were.
func TestResumingACompletedRunSaysThereIsNothingToResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	cfg := demoConfig(t, dir, 42)
	if code, _, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db); code != 0 && code != 1 {
		t.Fatalf("demo run exited %d:\n%s", code, stderr)
	}
	_, before, _ := inproc(t, "runs", "--db", db, "--json")
	code, out, stderr := inproc(t, "resume", "last", "--headless", "--db", db)
	if code != 0 {
		t.Errorf("resume of a completed run exited %d; want 0\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "completed: nothing to resume") {
		t.Errorf("resume does not say there is nothing to resume:\n%s%s", out, stderr)
	}
	if strings.Contains(out+stderr, "pass rate") {
		t.Errorf("resume replayed the run:\n%s%s", out, stderr)
	}
	if _, after, _ := inproc(t, "runs", "--db", db, "--json"); after != before {
		t.Errorf("the run changed:\nbefore %s\nafter  %s", before, after)
	}
}

// retry marks the cells it ran again, with what each was and came to.
func TestRetryMarksTheCellsItRanAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	cfg := demoConfig(t, dir, 42)
	if code, _, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db); code != 0 && code != 1 {
		t.Fatalf("demo run exited %d:\n%s", code, stderr)
	}
	_, before, _ := inproc(t, "runs", "--db", db, "--json")
	errs := strings.Count(before, `"error": `) // sanity: the demo has ⚠️ cells
	code, out, stderr := inproc(t, "retry", "last", "--headless", "--errors", "--time-scale", "0", "--db", db)
	if code != 0 && code != 1 {
		t.Fatalf("retry exited %d:\n%s%s", code, out, stderr)
	}
	marks := strings.Count(out, "  ↻ ")
	if errs == 0 || marks == 0 || !strings.Contains(out, "retried  "+strconv.Itoa(marks)+" cells") {
		t.Errorf("retry marked %d cells:\n%s", marks, out)
	}
	if !strings.Contains(out, ": error → ") {
		t.Errorf("a retried cell does not say it was ⚠️ before:\n%s", out)
	}
}
