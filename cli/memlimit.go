package cli

import (
	"math"
	"os"
	"runtime/debug"

	"pitwall/config"
)

// Go's soft memory limit for a run, set once as the app opens: a floor for
// what every run holds (the program, its fleet, its ledger's caches) and
// what each cell of the grid holds live (its cell, its verdicts, its share
// of the queues: about 400–450 bytes a cell at 100,000 judged cells,
// measured in BenchmarkBinaryJudged) and room above that for the
// collector, about half as much again: 640 bytes a cell in all. The collector's CPU is about the live heap over that
// room, so the room grows with the grid: at 500 bytes a cell it was a
// quarter of the live heap at 100,000 cells, and collection took 16% of
// the run's CPU there against 3% at 4,000.
//
// With GOGC alone the heap grows to twice the live heap before a
// collection; the limit holds it nearer, so that the program's peak is its
// live heap and a margin rather than twice it (100,000 judged cells: about
// 145 MB of RSS instead of 200). Sized by the grid, not fixed, it never
// sits below what the run keeps live: a limit under the live heap would
// have the collector run without end. GOMEMLIMIT, when set, is the user's
// and is left as it is.
const (
	memFloor   = 32 << 20
	memPerCell = 640
)

// fitMemoryLimit sets the limit for cfg's grid.
func fitMemoryLimit(cfg *config.Config) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || cfg == nil {
		return
	}
	debug.SetMemoryLimit(memoryLimit(len(cfg.Tests) * len(cfg.Models) * max(cfg.Run.Repeat, 1)))
}

// memoryLimit is the limit for a grid of cells.
func memoryLimit(cells int) int64 {
	return int64(min(float64(memFloor)+float64(memPerCell)*float64(cells), math.MaxInt64/2))
}
