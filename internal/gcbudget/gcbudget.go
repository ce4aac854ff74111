// Package gcbudget bounds how far the Go heap may grow past what it holds
// live. The runtime's default (GOGC=100) lets the heap reach twice its
// live size before collecting, which is right for a small heap and costly
// for a large one: a run of 100,000 cells holds about 90 MB live and would
// reach 180 MB before each collection. Start sets, after every collection,
// a soft memory limit of the live heap plus the runtime's own overhead plus
// a headroom: a quarter of the live heap, and never less than Min. Below
// 4×Min of live heap the headroom is Min, so a small run is collected as
// GOGC alone would (its goal, twice a small live heap, is under the limit)
// and a large one keeps 1.25× its live heap instead of 2×, for a few more
// collections.
//
// A limit the user set (GOMEMLIMIT, or debug.SetMemoryLimit before Start)
// is left alone: Start does nothing. It imports nothing of pitwall's.
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
}

// Limit is the limit Start sets for a live heap of live bytes in a runtime
// whose memory outside the heap (stacks, metadata, buffers) is overhead
// bytes.
func Limit(live, overhead uint64) int64 {
	const most = math.MaxInt64 / 4 // no sum below overflows
	if live > most || overhead > most {
		return math.MaxInt64
	}
	return int64(live + overhead + max(live/4, Min))
}

// Start sets the limit now and after every collection until stop is
// called, which gives the runtime back the limit it had. It does nothing
// (and stop does nothing) when GOMEMLIMIT is set or a limit was already
// set.
func Start() (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	t := &tuner{samples: make([]metrics.Sample, len(names))}
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
	live, total := v[0], v[1]
	heap := v[2] + v[3] + v[4] + v[5]
	var overhead uint64
	if total > heap {
		overhead = total - heap
	}
	debug.SetMemoryLimit(Limit(live, overhead))
}
