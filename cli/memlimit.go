package cli

import (
	"math"
	"os"
	"runtime/debug"

	"pitwall/config"
)

// Go's soft memory limit for a run, set once as the app opens, sized by
// the grid: a floor for what every run holds, and for each cell what it
// keeps live (cellLiveBytes) and half as much again of room for the
// collector. It holds the peak near the live heap rather than twice it:
// without it, 100,000 judged cells pass guardPeakMB100k (cli/guards_test.go;
// docs/performance.md). Where the limit is small (at most twice the floor)
// GOGC is off, the limit being the heap's goal; above, GOGC stays, so that
// a grid's estimate well over what it keeps live does not let the heap
// grow to it. GOMEMLIMIT and GOGC, when set, are the user's and are left as
// they are.
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
