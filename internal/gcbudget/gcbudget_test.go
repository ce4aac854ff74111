package gcbudget

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitIsLivePlusOverheadPlusHeadroom(t *testing.T) {
	for _, c := range []struct {
		live, overhead uint64
		want           int64
	}{
		{0, 0, Min},
		{10 << 20, 5 << 20, 15<<20 + Min},               // a small heap: the least headroom
		{4 * Min, 0, 5 * Min},                           // where a quarter reaches Min
		{400 << 20, 8 << 20, 400<<20 + 8<<20 + 100<<20}, // a large heap: a quarter
		{math.MaxUint64 - 1, 0, math.MaxInt64},          // no overflow
	} {
		if got := Limit(c.live, c.overhead); got != c.want {
			t.Errorf("Limit(%d, %d) = %d, want %d", c.live, c.overhead, got, c.want)
		}
	}
}

// keep holds a live heap for TestStartFollowsTheLiveHeap.
var keep [][]byte

func TestStartFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")                                      // an empty value is unset for the runtime too
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64)) // none, whatever started the test
	stop := Start()
	first := debug.SetMemoryLimit(-1)
	if first == math.MaxInt64 || first < Min {
		t.Fatalf("after Start the limit is %d, want a limit of at least Min (%d)", first, Min)
	}
	// 64 MB more live heap: the next collection must raise the limit by
	// at least that much.
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < first+60<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("64 MB later the limit is %d (was %d): not following the live heap", debug.SetMemoryLimit(-1), first)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs after the collection
	}
	keep = nil
	stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("after stop the limit is %d, want none", got)
	}
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("a collection after stop set the limit to %d", got)
	}
}

func TestStartLeavesAUserLimitAlone(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	stop := Start()
	defer stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set in the environment Start set a limit (%d)", got)
	}
	prev := debug.SetMemoryLimit(3 << 30)
	defer debug.SetMemoryLimit(prev)
	stop2 := Start()
	stop2()
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Fatalf("Start changed a limit set before it: %d", got)
	}
}
