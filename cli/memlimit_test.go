package cli

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"pitwall/config"
)

// The limit grows with the grid from a floor, never overflows, and is the
// user's to set: GOMEMLIMIT in the environment is left as it is.
func TestMemoryLimitFitsTheGridUnlessTheUserSetsIt(t *testing.T) {
	if got := memoryLimit(0); got != memFloor {
		t.Errorf("no cells: %d, want the floor %d", got, memFloor)
	}
	if got, want := memoryLimit(100_000), int64(memFloor+memPerCell*100_000); got != want {
		t.Errorf("100,000 cells: %d, want %d", got, want)
	}
	if got := memoryLimit(math.MaxInt); got <= memoryLimit(100_000) || got < 0 {
		t.Errorf("a grid too large to count: %d", got)
	}
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	cfg := &config.Config{Models: []string{"a", "b"}, Tests: make([]config.Test, 1000)}
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	fitMemoryLimit(cfg)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT set the limit became %d, want the user's %d", got, 1<<30)
	}
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT") // t.Setenv puts it back
	fitMemoryLimit(cfg)
	if got, want := debug.SetMemoryLimit(-1), memoryLimit(2000); got != want {
		t.Errorf("a grid of 2,000 cells: limit %d, want %d", got, want)
	}
}
