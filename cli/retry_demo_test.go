package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A retry draws its faults afresh: the simulator draws a fault from the
// seed and the request, so a fresh simulator on the run's own seed would
// fail every ⚠️ cell that retry sends again in the same way. With faults
// on half the requests, some of the retried cells must come back ✓.
func TestRetryOfTheSimulatedFleetDrawsItsFaultsAfresh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := demoConfig(t, dir, 42)
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "faults    = { error_rate = 0.08, cut_rate = 0.03 }", "faults    = { error_rate = 0.5 }", 1)
	if text == string(raw) {
		t.Fatal("the demo config no longer has the faults line this test raises")
	}
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "ledger.db")
	if code, _, errOut := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db); code != 1 {
		t.Fatalf("a run with faults on half the requests exited %d, want 1:\n%s", code, errOut)
	}
	first := exportRun(t, dir, db, "last")
	errored := map[string]bool{}
	for _, c := range first.Cells {
		if c.Status == "error" {
			errored[c.Model+"/"+c.Test] = true
		}
	}
	if len(errored) < 8 {
		t.Fatalf("only %d ⚠️ cells: too few for the test to tell a fresh draw from the same one", len(errored))
	}
	code, _, errOut := inproc(t, "retry", "last", "--errors", "--headless", "--time-scale", "0", "--db", db)
	if code != 0 && code != 1 {
		t.Fatalf("retry exited %d:\n%s", code, errOut)
	}
	// The headless lines list the cells sent again, not the whole run.
	listed := 0
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "[judge") {
			listed++
		}
	}
	if listed != len(errored) || !strings.Contains(errOut, "were already done (not listed again)") {
		t.Errorf("retry listed %d cells, want the %d it sent again, after a line saying the rest were done:\n%s", listed, len(errored), errOut)
	}
	fixed := 0
	for _, c := range exportRun(t, dir, db, first.Run.ID).Cells {
		if errored[c.Model+"/"+c.Test] && c.Status != "error" {
			fixed++
		}
	}
	if fixed == 0 {
		t.Errorf("retry sent %d ⚠️ cells again and every one failed again: the simulator drew the same faults", len(errored))
	}
}

// A retry of a run with nothing to retry says so and sends nothing: going
// on would replay the run and stretch its duration.
func TestRetryWithNothingToRetrySaysSoAndSendsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := demoConfig(t, dir, 42)
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "faults    = { error_rate = 0.08, cut_rate = 0.03 }", "", 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "ledger.db")
	ran, _, errOut := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db)
	if ran != 0 && ran != 1 {
		t.Fatalf("the run exited %d:\n%s", ran, errOut)
	}
	before := exportRun(t, dir, db, "last")
	for _, c := range before.Cells {
		if c.Status == "error" || c.Status == "cancelled" {
			t.Fatalf("a run without faults has a %s cell: %+v", c.Status, c)
		}
	}
	code, out, errOut := inproc(t, "retry", "last", "--headless", "--db", db)
	if code != ran || !strings.Contains(out, "nothing to retry") {
		t.Errorf("retry of a run with no ⚠️ or ⊘ cell: exit %d, %q %q; want the run's %d and nothing to retry", code, out, errOut, ran)
	}
	if after := exportRun(t, dir, db, before.Run.ID); len(after.Requests) != len(before.Requests) {
		t.Errorf("retry with nothing to retry sent requests: %d in the ledger, %d before", len(after.Requests), len(before.Requests))
	}
}
