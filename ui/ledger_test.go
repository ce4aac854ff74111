package ui

import "pitwall/runner/state"

// ledgerFuncs is a Ledger for tests: each set field answers its method,
// and an unset one answers as noLedger does.
type ledgerFuncs struct {
	whole     func(state.CellRef) (*state.Cell, error)
	reply     func(state.CellRef) (state.Reply, error)
	otherRuns func(*state.BatteryRun) ([]string, error)
	loadRun   func(string) (*state.BatteryRun, error)
	estimate  func([]state.CellRef, string, int) (int, float64, bool, bool)
	spend     func(*state.BatteryRun) (Spend, Spend, bool)
}

func (l ledgerFuncs) Whole(ref state.CellRef) (*state.Cell, error) {
	if l.whole == nil {
		return noLedger{}.Whole(ref)
	}
	return l.whole(ref)
}

func (l ledgerFuncs) Reply(ref state.CellRef) (state.Reply, error) {
	if l.reply == nil {
		return noLedger{}.Reply(ref)
	}
	return l.reply(ref)
}

func (l ledgerFuncs) OtherRuns(run *state.BatteryRun) ([]string, error) {
	if l.otherRuns == nil {
		return noLedger{}.OtherRuns(run)
	}
	return l.otherRuns(run)
}

func (l ledgerFuncs) LoadRun(id string) (*state.BatteryRun, error) {
	if l.loadRun == nil {
		return noLedger{}.LoadRun(id)
	}
	return l.loadRun(id)
}

func (l ledgerFuncs) Estimate(refs []state.CellRef, judge string, samples int) (int, float64, bool, bool) {
	if l.estimate == nil {
		return noLedger{}.Estimate(refs, judge, samples)
	}
	return l.estimate(refs, judge, samples)
}

func (l ledgerFuncs) Spend(run *state.BatteryRun) (Spend, Spend, bool) {
	if l.spend == nil {
		return noLedger{}.Spend(run)
	}
	return l.spend(run)
}
