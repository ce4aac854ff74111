package cli

import (
	"path/filepath"
	"testing"

	"pitwall/runner/ledger"
)

func TestRetryErrorsRunsOnlyTheErroredCellsAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fleet, config := resumeFleet(t, dir, "faults = { error_rate = 0.4 }")
	db := filepath.Join(dir, ".pitwall", "ledger.db")
	if code, _, errOut := pitwall(t, dir, nil, "run", config, "--headless"); code != 1 {
		t.Fatalf("a run with faults exited %d, want 1:\n%s", code, errOut)
	}
	first := exportRun(t, dir, db, "last")
	id := first.Run.ID
	errored := map[string]bool{}
	for _, c := range first.Cells {
		if c.Status == "error" {
			errored[cellKey(c.Model, c.Test, c.Repeat)] = true
		}
	}
	if len(errored) == 0 {
		t.Fatal("the faults drew no ⚠️ cell: nothing to retry")
	}

	// --cancelled alone leaves the ⚠️ cells be: the run has no ⊘ cell, so
	// nothing is sent.
	before := fleet.requests(t)
	if code, _, errOut := pitwall(t, dir, nil, "retry", id, "--cancelled", "--headless", "--db", db); code != 1 {
		t.Errorf("retry --cancelled exited %d, want 1 (the ⚠️ cells are still there):\n%s", code, errOut)
	}
	if n := sent(before, fleet.requests(t), resumeModels...); n != 0 {
		t.Errorf("retry --cancelled of a run with no ⊘ cell sent %d inference requests, want none", n)
	}

	was := requestsOf(t, db, id)
	before = fleet.requests(t)
	code, _, errOut := pitwall(t, dir, nil, "retry", "last", "--errors", "--headless", "--db", db)
	if code != 0 && code != 1 {
		t.Fatalf("retry --errors exited %d:\n%s", code, errOut)
	}
	after := fleet.requests(t)
	got := exportRun(t, dir, db, id)
	if got.Run.ID != id {
		t.Fatalf("retry made run %s, want run %s again", got.Run.ID, id)
	}

	var last int64
	for _, q := range was {
		last = max(last, q.ID)
	}
	resent := map[string]int{}
	var inference, warm int64
	for _, q := range requestsOf(t, db, id) {
		if q.ID <= last {
			continue
		}
		switch q.Purpose {
		case ledger.PurposeInference:
			resent[cellKey(q.Model, q.Test, q.Repeat)]++
			inference++
		case ledger.PurposeWarmup:
			if q.Model != "judge-a" {
				warm++
			}
		}
	}
	for k := range errored {
		if resent[k] == 0 {
			t.Errorf("⚠️ cell %s was not run again", k)
		}
	}
	for k, n := range resent {
		if !errored[k] {
			t.Errorf("cell %s, not ⚠️, was sent %d more times", k, n)
		}
	}
	if n := sent(before, after, resumeModels...); n != inference+warm {
		t.Errorf("the simulator received %d requests for the run's models; the ledger says %d inference and %d warm-ups were sent", n, inference, warm)
	}
	t.Logf("%d ⚠️ cells of %d; retry sent %d inference requests", len(errored), len(first.Cells), inference)

	// The other cells are as they were, verdicts included; the old
	// attempts of the ⚠️ ones stay beside the new.
	old := map[string]int{}
	for _, c := range first.Cells {
		old[cellKey(c.Model, c.Test, c.Repeat)] = c.Attempts
	}
	var others, kept fullExport
	for _, x := range []struct {
		from fullExport
		to   *fullExport
	}{{first, &kept}, {got, &others}} {
		for _, c := range x.from.Cells {
			if !errored[cellKey(c.Model, c.Test, c.Repeat)] {
				x.to.Cells = append(x.to.Cells, c)
			}
		}
	}
	for _, d := range sameCells(others, kept) {
		t.Error("a cell that was not ⚠️ changed: " + d)
	}
	for _, c := range got.Cells {
		k := cellKey(c.Model, c.Test, c.Repeat)
		if errored[k] && c.Attempts != old[k]+resent[k] {
			t.Errorf("cell %s has %d attempts, want %d before and %d new", k, c.Attempts, old[k], resent[k])
		}
	}
}
