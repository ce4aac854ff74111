package ui

import (
	"errors"

	"pitwall/runner/state"
)

// Ledger is what the screen asks of the run's ledger. Every method is
// called from a command or the plain output, never from Update.
type Ledger interface {
	// Whole reads a cell whole, verdicts and all: a snapshot keeps no
	// finished cell's texts and checks (state.Cell.Clipped), and the
	// detail view, side by side and V ask for them.
	Whole(ref state.CellRef) (*state.Cell, error)
	// Reply reads what a cell said (texts, checks, error) without its
	// verdicts: the headless line of a ❌ cell names the check that failed.
	// It should not wait on writes.
	Reply(ref state.CellRef) (state.Reply, error)
	// OtherRuns lists the ids of the other runs of run's battery, newest
	// first, and LoadRun reads one as a snapshot under its own judge: V
	// shows the cursor's cell beside the same cell in another run.
	OtherRuns(run *state.BatteryRun) ([]string, error)
	LoadRun(id string) (*state.BatteryRun, error)
	// Estimate is what judging refs again with judge (a judge, or the jury)
	// at samples calls per judge per cell should cost: tokens, and the cost
	// when priced; ok false says nothing can be estimated. It is called
	// once per re-judge question and should answer in milliseconds.
	Estimate(refs []state.CellRef, judge string, samples int) (tokens int, cost float64, priced, ok bool)
	// Spend is what the run's inference and judging cost, apart, for the
	// summary.
	Spend(last *state.BatteryRun) (inference, judging Spend, ok bool)
}

// errNoLedger is what noLedger answers a read with.
var errNoLedger = errors.New("no ledger at hand")

// noLedger is the screen without a ledger: it reads nothing and estimates
// nothing, and the views say where the whole text is instead.
type noLedger struct{}

func (noLedger) Whole(state.CellRef) (*state.Cell, error)      { return nil, errNoLedger }
func (noLedger) Reply(state.CellRef) (state.Reply, error)      { return state.Reply{}, errNoLedger }
func (noLedger) OtherRuns(*state.BatteryRun) ([]string, error) { return nil, errNoLedger }
func (noLedger) LoadRun(string) (*state.BatteryRun, error)     { return nil, errNoLedger }
func (noLedger) Spend(*state.BatteryRun) (Spend, Spend, bool)  { return Spend{}, Spend{}, false }
func (noLedger) Estimate([]state.CellRef, string, int) (int, float64, bool, bool) {
	return 0, 0, false, false
}

// ledger is opts.Ledger, or noLedger when there is none.
func (o Options) ledger() Ledger {
	if o.Ledger == nil {
		return noLedger{}
	}
	return o.Ledger
}

// hasLedger reports whether the screen reads a ledger: V and the whole
// texts need one.
func (o Options) hasLedger() bool { return o.Ledger != nil }
