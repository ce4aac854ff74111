package cli

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"pitwall/config"
)

// The limit grows with the grid from a floor, never overflows, and is the
// user's to set: GOMEMLIMIT in the environment is left as it is. Under it
// GOGC is off, unless the environment sets GOGC.
func TestMemoryLimitFitsTheGridUnlessTheUserSetsIt(t *testing.T) {
	if got := memoryLimit(0, 420); got != memFloor {
		t.Errorf("no cells: %d, want the floor %d", got, memFloor)
	}
	if got, want := memoryLimit(100_000, 420), int64(memFloor+630*100_000); got != want {
		t.Errorf("100,000 cells of 420 bytes: %d, want %d", got, want)
	}
	if got := memoryLimit(math.MaxInt, 420); got <= memoryLimit(100_000, 420) || got < 0 {
		t.Errorf("a grid too large to count: %d", got)
	}
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	cfg := &config.Config{Models: []string{"a", "b"}, Tests: make([]config.Test, 1000),
		Scoring: config.Scoring{Judges: []config.Judge{{Name: "j"}}}}
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	fitMemoryLimit(cfg)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT set the limit became %d, want the user's %d", got, 1<<30)
	}
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT") // t.Setenv puts it back
	gogc := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(gogc) })
	t.Setenv("GOGC", "150")
	fitMemoryLimit(cfg)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the collector's percent became %d, want it left alone", got)
	}
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	fitMemoryLimit(cfg)
	if got, want := debug.SetMemoryLimit(-1), memoryLimit(2000, cellLiveBytes(cfg)); got != want {
		t.Errorf("a grid of 2,000 cells: limit %d, want %d", got, want)
	}
	if got := debug.SetGCPercent(100); got != -1 {
		t.Errorf("under a small limit GOGC is %d, want off (-1): the limit is the heap's goal", got)
	}
	// A large grid keeps GOGC: a limit sized by every configured judge can
	// be far over what a run keeps live.
	big := &config.Config{Models: make([]string, 100), Tests: make([]config.Test, 1000),
		Scoring: config.Scoring{Judges: []config.Judge{{Name: "j"}}}}
	fitMemoryLimit(big)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("100,000 cells: GOGC %d, want 100 (the limit is %d)", got, memoryLimit(100_000, cellLiveBytes(big)))
	}
	if gcPercent(2*memFloor) != -1 || gcPercent(2*memFloor+1) != 100 {
		t.Errorf("gcPercent: off up to twice the floor, 100 above")
	}
}

// A cell keeps more live the more judges may judge it and the more they
// vote: the limit follows, so that it never sits under the live heap of a
// jury's run (where the collector would run without end).
func TestMemoryLimitCountsJudgesAndVotes(t *testing.T) {
	judges := func(n, samples int) *config.Config {
		cfg := &config.Config{Scoring: config.Scoring{Samples: samples}}
		for i := range n {
			cfg.Scoring.Judges = append(cfg.Scoring.Judges, config.Judge{Name: fmt.Sprint("j", i)})
		}
		return cfg
	}
	none, one, jury, voting := cellLiveBytes(judges(0, 0)), cellLiveBytes(judges(1, 1)), cellLiveBytes(judges(3, 1)), cellLiveBytes(judges(3, 3))
	if one != 420 {
		t.Errorf("one judge: %d bytes a cell, want the 420 BenchmarkBinaryJudged measures", one)
	}
	if !(none < one && one < jury && jury < voting) {
		t.Errorf("bytes a cell: no judge %d, one %d, a jury of three %d, voting three times %d: want each more than the last", none, one, jury, voting)
	}
	// Three judges' judgments, the jury's, and nine votes kept.
	if want := cellBytes + 3*(judgmentBytes+3*voteBytes) + juryBytes; voting != want {
		t.Errorf("a jury of three voting three times: %d bytes a cell, want %d", voting, want)
	}
}
