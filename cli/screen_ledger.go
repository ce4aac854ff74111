package cli

import (
	"pitwall/config"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
	"pitwall/ui"
)

// screenLedger is what the screen reads from the ledger (ui.Ledger) for
// run runID; cfg expands a judge or jury for the re-judge estimate.
type screenLedger struct {
	cfg   *config.Config
	led   *ledger.Ledger
	runID string
}

var _ ui.Ledger = screenLedger{}

func (s screenLedger) Whole(ref state.CellRef) (*state.Cell, error) {
	return history.LoadCell(s.led, s.runID, ref)
}

func (s screenLedger) Reply(ref state.CellRef) (state.Reply, error) {
	return history.LoadReply(s.led, s.runID, ref)
}

func (s screenLedger) OtherRuns(run *state.BatteryRun) ([]string, error) {
	return otherRuns(s.led)(run)
}

func (s screenLedger) LoadRun(id string) (*state.BatteryRun, error) { return loadRun(s.led)(id) }

func (s screenLedger) Estimate(refs []state.CellRef, judge string, samples int) (int, float64, bool, bool) {
	if s.cfg == nil {
		return 0, 0, false, false
	}
	return estimator(s.cfg, s.led, s.runID)(refs, judge, samples)
}

func (s screenLedger) Spend(b *state.BatteryRun) (ui.Spend, ui.Spend, bool) { return spendOf(s.led)(b) }
