// Package gcbudget bounds how far the Go heap may grow past what it holds
// live. The runtime's default (GOGC=100) lets the heap reach twice its
// live size before collecting, which is right for a small heap and costly
// for a large one: a run of 100,000 cells holds about 90 MB live and would
// reach 180 MB before each collection. Start sets, after every collection,
// a soft memory limit of the live heap plus the runtime's own overhead plus
// a headroom: a quarter of the live heap, and never less than Min. Below
// 4×Min of live heap the headroom is Min, so a small run is collected as
// GOGC alone would (its goal, twice a small live heap, is under the limit)
// and a large one keeps about 1.25× its live heap instead of 2×, for a few
// more collections.
//
// A fragmented heap holds more than its live bytes: the free slots of spans
// that still hold live objects, which the runtime cannot give back and
// cannot measure until it has swept. Against a limit that leaves them out
// the collector would run back to back. So the tuner watches what was
// allocated between collections the limit brought on: when two in a row
// came with under a quarter of the headroom allocated, the heap holds more
// than the limit allows for, and the limit grows by a headroom (a
// fragmentation allowance), which shrinks again while collections are as
// far apart as they should be. The tuner runs on the finalizer goroutine,
// which on one busy processor may wait while several collections run; they
// are counted as they come (collections since the last look, and the bytes
// allocated over them). A forced collection (runtime.GC) says nothing of
// the limit and is not counted.
//
// A limit or a GOGC the user set (GOMEMLIMIT or GOGC in the environment,
// or debug.SetMemoryLimit before Start) is left alone: Start does nothing.
// It imports nothing of pitwall's.
package gcbudget

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Min is the least headroom above the live heap.
const Min = 24 << 20

// samples read after each collection.
var names = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/gc/heap/allocs:bytes",
	"/gc/cycles/forced:gc-cycles",
	"/gc/cycles/total:gc-cycles",
}

// Limit is the limit Start sets for a live heap of live bytes in a runtime
// whose memory outside the heap (stacks, metadata, buffers) is overhead
// bytes, with extra bytes allowed for fragmentation.
func Limit(live, overhead, extra uint64) int64 {
	const most = math.MaxInt64 / 8 // no sum below overflows
	if live > most || overhead > most || extra > most {
		return math.MaxInt64
	}
	return int64(live + overhead + extra + headroom(live))
}

// headroom is what the heap may grow past what it holds before a
// collection.
func headroom(live uint64) uint64 { return max(live/4, Min) }

// Start sets the limit now and after every collection until stop is
// called, which gives the runtime back the limit it had. It does nothing
// (and stop does nothing) when GOMEMLIMIT or GOGC is set or a limit was
// already set.
func Start() (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	t := &tuner{samples: make([]metrics.Sample, len(names)), goal: [1]metrics.Sample{{Name: "/gc/heap/goal:bytes"}}}
	for i, n := range names {
		t.samples[i].Name = n
	}
	t.set()
	t.arm()
	return func() {
		if t.stopped.Swap(true) {
			return
		}
		t.mu.Lock()
		debug.SetMemoryLimit(math.MaxInt64)
		t.mu.Unlock()
	}
}

type tuner struct {
	samples []metrics.Sample
	stopped atomic.Bool
	mu      sync.Mutex // set and stop

	goal [1]metrics.Sample // the heap's goal, read after a limit is set

	// Of the last set, for the next.
	allocs uint64 // bytes allocated so far
	forced uint64 // collections forced so far (runtime.GC): they say nothing of the limit
	cycles uint64 // collections so far
	bound  bool   // the limit was under GOGC's goal: the limit brings collections on
	tight  uint64 // collections in a row the limit brought on under a quarter of the headroom
	extra  uint64 // the fragmentation allowance
}

// arm runs set once the next collection has found a fresh sentinel
// unreachable, and arms again: one set per collection.
func (t *tuner) arm() {
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		if t.stopped.Load() {
			return
		}
		t.set()
		t.arm()
	})
}

func (t *tuner) set() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.samples)
	v := make([]uint64, len(t.samples))
	for i, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	live, total, allocs := v[0], v[1], v[6]
	heap := v[2] + v[3] + v[4] + v[5]
	var overhead uint64
	if total > heap {
		overhead = total - heap
	}
	// Collections since the last set: more than one when the finalizer's
	// goroutine waited for a processor (one CPU, a busy allocating loop)
	// while the limit brought several on; each counts.
	allocated, forced, cycles := allocs-t.allocs, v[7]-t.forced, v[8]-t.cycles
	t.forced, t.cycles = v[7], v[8]
	if t.bound && forced == 0 && cycles > 0 && allocated < cycles*(headroom(live)/4) {
		t.tight += cycles
	} else {
		t.tight = 0
	}
	t.extra = nextExtra(t.extra, t.tight >= 2, allocated, live)
	t.allocs = allocs
	debug.SetMemoryLimit(Limit(live, overhead, t.extra))
	// The heap's goal under the new limit: under GOGC=100's (twice the
	// live heap), the limit is what brings the next collection on.
	metrics.Read(t.goal[:])
	t.bound = t.goal[0].Value.Kind() == metrics.KindUint64 && t.goal[0].Value.Uint64() < 2*live
}

// nextExtra is the fragmentation allowance after a collection that came
// once allocated bytes were allocated since the one before; spiral says
// that the limit brought it and the one before on with under a quarter of
// the headroom used (one short cycle may be chance; two in a row are the
// heap holding more than the limit allows for).
func nextExtra(extra uint64, spiral bool, allocated, live uint64) uint64 {
	h := headroom(live)
	switch {
	case spiral:
		return min(extra+h, max(live, 4*Min))
	case allocated >= h:
		return extra - extra/8 // slowly: a heap that was fragmented stays so a while
	}
	return extra
}
