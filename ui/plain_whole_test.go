package ui

import (
	"context"
	"strings"
	"testing"

	"pitwall/runner/history"
	"pitwall/runner/state"
)

// The live state leaves a failed cell's checks to the ledger: the headless
// line still names the check that failed, read there.
func TestPlainLineNamesTheFailedCheckReadFromTheLedger(t *testing.T) {
	t.Parallel()
	run, led := realRun(t, false)
	b := run.Wait(context.Background())
	var failed *state.Cell
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if c.Status == state.Failed && failed == nil {
				failed = c
			}
		}
	}
	if failed == nil {
		t.Fatal("the run has no ❌ cell: the test proves nothing")
	}
	if !failed.Clipped || len(failed.Said().Checks) > 0 {
		t.Fatalf("the live ❌ cell keeps its checks (clipped %v): %+v", failed.Clipped, failed.Said().Checks)
	}
	whole, err := history.LoadCell(led, run.ID(), state.CellRef{Test: failed.Test, Model: failed.Model, Repeat: failed.Repeat})
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, ch := range whole.Said().Checks {
		if !ch.Pass {
			want = ch.Name
			break
		}
	}
	if want == "" {
		t.Fatalf("the ledger's ❌ cell has no failed check: %+v", whole.Said().Checks)
	}
	reads := 0
	opts := Options{Ledger: ledgerFuncs{reply: func(ref state.CellRef) (state.Reply, error) {
		reads++
		return history.LoadReply(led, run.ID(), ref)
	}}}
	if got := newPlain(&strings.Builder{}, opts).outcome(failed); !strings.Contains(got, want) || reads != 1 {
		t.Errorf("line %q after %d reads; want it to name the failed check %q, read once", got, reads, want)
	}
	if got := newPlain(&strings.Builder{}, Options{}).outcome(failed); strings.Contains(got, want) {
		t.Errorf("line %q names %q with nothing to read the ledger with", got, want)
	}
}
