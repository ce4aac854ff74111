package gcbudget

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestLimitIsLivePlusOverheadPlusAllowancePlusHeadroom(t *testing.T) {
	for _, c := range []struct {
		live, overhead, extra uint64
		want                  int64
	}{
		{0, 0, 0, Min},
		{10 << 20, 5 << 20, 0, 15<<20 + Min},                         // a small heap: the least headroom
		{4 * Min, 0, 0, 5 * Min},                                     // where a quarter reaches Min
		{400 << 20, 8 << 20, 0, 400<<20 + 8<<20 + 100<<20},           // a large heap: a quarter
		{80 << 20, 8 << 20, 48 << 20, 80<<20 + 8<<20 + 48<<20 + Min}, // fragmented: the allowance on top
		{math.MaxUint64 - 1, 0, 0, math.MaxInt64},                    // no overflow
	} {
		if got := Limit(c.live, c.overhead, c.extra); got != c.want {
			t.Errorf("Limit(%d, %d, %d) = %d, want %d", c.live, c.overhead, c.extra, got, c.want)
		}
	}
}

// The allowance grows while collections come back to back, never past the
// live heap (or 4×Min), and shrinks slowly while they are as far apart as
// they should be.
func TestTheAllowanceFollowsFragmentation(t *testing.T) {
	const live = 40 << 20
	extra := uint64(0)
	for range 3 { // back to back: up by a headroom each time
		extra = nextExtra(extra, true, Min/8, live)
	}
	if extra != 3*Min {
		t.Fatalf("after three tight collections the allowance is %d, want %d", extra, 3*Min)
	}
	if got := nextExtra(extra, false, Min/8, live); got != extra {
		t.Errorf("a lone short collection changed the allowance: %d, was %d", got, extra)
	}
	if got := nextExtra(extra, false, Min/2, live); got != extra {
		t.Errorf("a collection after half the headroom changed the allowance: %d, was %d", got, extra)
	}
	if got := nextExtra(extra, false, Min, live); got >= extra || got < extra/2 {
		t.Errorf("a healthy collection took the allowance from %d to %d, want a little less", extra, got)
	}
	big := uint64(0)
	for range 100 {
		big = nextExtra(big, true, 0, live)
	}
	if big != 4*Min {
		t.Errorf("the allowance grew to %d, want it capped at %d", big, 4*Min)
	}
}

// keep holds a live heap for TestStartFollowsTheLiveHeap.
var keep [][]byte

func TestStartFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // an empty value is unset for the runtime too
	t.Setenv("GOGC", "")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64)) // none, whatever started the test
	stop := Start()
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	first := debug.SetMemoryLimit(-1)
	if first == math.MaxInt64 || first < Min {
		t.Fatalf("after Start the limit is %d, want a limit of at least Min (%d)", first, Min)
	}
	// 64 MB more live heap: a collection later the limit is over it by a
	// headroom at least.
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs after the collection
		metrics.Read(live)
		l := int64(live[0].Value.Uint64())
		got := debug.SetMemoryLimit(-1)
		if l >= 64<<20 && got >= l+Min {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with %d MB live the limit is %d MB (was %d MB): not following the live heap", l>>20, got>>20, first>>20)
		}
	}
	keep = nil
	stop()
	stopped = true
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
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, env := range []string{"GOMEMLIMIT=1GiB", "GOGC=off", "GOGC=400"} {
		name, value, _ := strings.Cut(env, "=")
		t.Setenv("GOMEMLIMIT", "")
		t.Setenv("GOGC", "")
		t.Setenv(name, value)
		stop := Start()
		got := debug.SetMemoryLimit(-1)
		stop()
		if got != math.MaxInt64 {
			t.Fatalf("with %s in the environment Start set a limit (%d)", env, got)
		}
	}
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	prev := debug.SetMemoryLimit(3 << 30)
	defer debug.SetMemoryLimit(prev)
	stop2 := Start()
	stop2()
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Fatalf("Start changed a limit set before it: %d", got)
	}
}

// sink keeps the fragmented heap of TestAFragmentedHeapIsNotCollectedBackToBack.
var sink [][]byte

// A heap whose spans hold a few live objects each keeps their free slots:
// memory the runtime holds and cannot give back. A limit under it would
// have the collector run back to back; garbage made then must cost about
// one collection per headroom of it, as with no fragmentation. On one
// processor the loop making the garbage keeps the finalizer that sets the
// limit waiting while several collections run; they count all the same.
func TestAFragmentedHeapIsNotCollectedBackToBack(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	for _, procs := range []int{runtime.GOMAXPROCS(0), 1} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			collectFragmented(t)
		})
	}
}

func collectFragmented(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	all := make([][]byte, 0, 1<<20)
	for range 1 << 20 { // 64 MB of 64-byte objects
		all = append(all, make([]byte, 64))
	}
	for i := 0; i < len(all); i += 4 { // one in 4 stays: 16 MB live, 48 MB of free slots in its spans
		sink = append(sink, all[i])
	}
	all = nil
	runtime.GC()
	stop := Start()
	defer stop()
	runtime.GC()
	time.Sleep(10 * time.Millisecond) // the finalizer sets the limit after the collection
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const garbage = 96 << 20
	var keepLast []byte
	for range garbage / 1024 {
		keepLast = make([]byte, 1024)
	}
	_ = keepLast
	runtime.ReadMemStats(&after)
	sink = nil
	n := after.NumGC - before.NumGC
	t.Logf("%d MB of garbage over a fragmented heap: %d collections (limit %d MB)", garbage>>20, n, debug.SetMemoryLimit(-1)>>20)
	if n > 24 {
		t.Errorf("%d collections for %d MB of garbage: the limit is under what the heap holds", n, garbage>>20)
	}
}
