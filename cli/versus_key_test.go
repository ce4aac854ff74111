package cli

import (
	"slices"
	"testing"

	"pitwall/runner/history"
	"pitwall/runner/ledger"
)

// V in the grid lists the other runs of the battery and reads the one
// chosen; over two demo runs in one ledger, each finds the other.
func TestVersusKeyFindsTheOtherRunsInTheLedger(t *testing.T) {
	t.Parallel()
	db, a := demoRun(t, 1)
	_, b := demoRun(t, 2)
	led, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	run, err := history.LoadSnapshot(led, a, "")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := otherRuns(led)(run)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, b) || slices.Contains(ids, a) {
		t.Fatalf("other runs of %s: %v; want %s and not itself", a, ids, b)
	}
	other, err := loadRun(led)(b)
	if err != nil || other.ID != b || len(other.Rows) == 0 {
		t.Fatalf("reading %s: %v", b, err)
	}
	if _, err := loadRun(led)("no-such-run"); err == nil {
		t.Error("reading a run the ledger lacks should fail")
	}
}
