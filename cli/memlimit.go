package cli

import (
	"math"
	"os"
	"runtime/debug"

	"pitwall/config"
)

// Go's soft memory limit for a run, set once as the app opens: a floor for
// what every run holds (the program, its fleet, its ledger's caches) and,
// for each cell of the grid, what it holds live (cellLiveBytes) and half as
// much again of room for the collector. The collector's CPU goes with the
// live heap over that room, so the room grows with the grid: at a quarter
// of the live heap (500 bytes a cell with one judge) collection took 16%
// of a 100,000-cell run's CPU, against 3% at 4,000 cells.
//
// With GOGC alone the heap grows to twice the live heap before a
// collection; the limit holds it nearer, so that the program's peak is its
// live heap and a margin rather than twice it (100,000 judged cells: about
// 140 MB of RSS instead of 200). Sized by the grid and its judges, not
// fixed, it never sits below what the run keeps live: a limit under the
// live heap would have the collector run without end (a jury of three
// voting three times each, under a limit sized for one judge, took 30%
// more CPU at 10,000 cells). GOMEMLIMIT, when set, is the user's and is
// left as it is.
//
// Where the limit is small (at most twice the floor) GOGC is off: the limit
// is the heap's goal, so a small run's heap grows to the floor before a
// collection rather than to twice its few megabytes live (a 2,000-cell
// run collected about twice as often, for about 10% more CPU). Above, GOGC
// stays: a grid's estimate can be well over what it keeps live (every
// configured judge counts, and a run may use one), and GOGC then keeps
// the heap within twice its live size, where the limit alone would let it
// grow to the estimate. A large run's limit is under twice its live heap,
// so there the limit is the goal either way. GOGC, when set, is the
// user's and is left as it is.
const memFloor = 32 << 20

// What a cell keeps live, in bytes, measured in BenchmarkBinaryJudged
// (about 420 a cell with one judge at 100,000 cells) and from the sizes of
// state.Judgment (136) and scoring.Sample (80):
const (
	cellBytes     = 270 // its state.Cell, its place in the table, the queues and the writer
	judgmentBytes = 150 // a judge's state.Judgment and its place in the cell's list
	voteBytes     = 80  // a vote kept when a judge votes more than once
	juryBytes     = 250 // the jury's judgment and its tally
)

// cellLiveBytes is what a cell of cfg's run keeps live at most: every
// configured judge counts, since a run may switch to any of them, and the
// jury whenever there are two.
func cellLiveBytes(cfg *config.Config) int {
	judges := len(cfg.Scoring.Judges)
	votes := 0
	if k := cfg.Scoring.Samples; k > 1 {
		votes = k
	}
	n := cellBytes + judges*(judgmentBytes+votes*voteBytes)
	if judges >= 2 {
		n += juryBytes
	}
	return n
}

// fitMemoryLimit sets the limit for cfg's grid.
func fitMemoryLimit(cfg *config.Config) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || cfg == nil {
		return
	}
	cells := len(cfg.Tests) * len(cfg.Models) * max(cfg.Run.Repeat, 1)
	limit := memoryLimit(cells, cellLiveBytes(cfg))
	debug.SetMemoryLimit(limit)
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent(limit))
	}
}

// gcPercent is GOGC under a limit: off where the limit is small enough to
// be the heap's goal, 100 (Go's default) above.
func gcPercent(limit int64) int {
	if limit <= 2*memFloor {
		return -1
	}
	return 100
}

// memoryLimit is the limit for a grid of cells that keep live bytes each.
func memoryLimit(cells, live int) int64 {
	return int64(min(float64(memFloor)+1.5*float64(live)*float64(cells), math.MaxInt64/2))
}
