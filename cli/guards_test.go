package cli

import (
	"fmt"
	"os"
	"testing"
)

// The guards the binary benchmarks hold (docs/performance.md): each
// benchmark fails when its figure is past its bound.
const (
	guardPeakMB100k  = 150 // peak RSS of 100,000 judged cells, MB
	guardFlat        = 1.2 // CPU per cell at 100,000 cells over that at 4,000
	guardVsPromptfoo = 20  // promptfoo's CPU per judged cell over pitwall's, at least
)

// bigRun is the cell count from which a run skips under -short.
const bigRun = 10000

// skipBig skips a run of cells or more under -short.
func skipBig(b *testing.B, cells int) {
	if testing.Short() && cells >= bigRun {
		b.Skipf("-short skips runs of %d cells or more (this one: %d; minutes on 2 cores)", bigRun, cells)
	}
}

// underTest is the pitwall binary the benchmarks measure: PITWALL_BIN
// (scripts/bench-binary.sh builds one per revision), or the one built from
// this tree. The simulators are always this tree's.
func underTest() string {
	if p := os.Getenv("PITWALL_BIN"); p != "" {
		return p
	}
	return bin
}

// atMost is why got is past the bound max, or "".
func atMost(name string, got, limit float64) string {
	if got > limit {
		return fmt.Sprintf("%s %.3f, past the guard's %.3g", name, got, limit)
	}
	return ""
}

// atLeast is why got is short of the bound min, or "".
func atLeast(name string, got, limit float64) string {
	if got < limit {
		return fmt.Sprintf("%s %.3f, short of the guard's %.3g", name, got, limit)
	}
	return ""
}

// guard fails b with why, if there is one.
func guard(b *testing.B, why string) {
	b.Helper()
	if why != "" {
		b.Error(why)
	}
}

func TestGuardsSayWhenAFigureIsPast(t *testing.T) {
	if atMost("peak", 151, guardPeakMB100k) == "" || atMost("peak", 150, guardPeakMB100k) != "" {
		t.Error("atMost: 151 MB must break the 150 MB guard, 150 must hold it")
	}
	if atMost("flat", 1.21, guardFlat) == "" || atMost("flat", 1.19, guardFlat) != "" {
		t.Error("atMost: 1.21× must break the 1.2× guard, 1.19× must hold it")
	}
	if atLeast("x-cpu", 19.9, guardVsPromptfoo) == "" || atLeast("x-cpu", 20, guardVsPromptfoo) != "" {
		t.Error("atLeast: 19.9× must break the 20× guard, 20× must hold it")
	}
}
