package ui

import (
	"pitwall/runner/state"
	"runtime"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Benchmarks of the live grid at a 120×40 screen. A frame must cost what is
// on screen, not the grid: compare BenchmarkView_100x1000 with
// BenchmarkView_10x100.

func benchModel(snap *state.BatteryRun) *model {
	m := testModel(120, 40, Options{}, nil)
	show(m, snap)
	m.render()
	return m
}

// heldMB is the heap that build's result keeps alive, in MiB.
func heldMB(build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
}

// benchView moves the cursor a row and draws a frame, as a person browsing
// a live grid does: the cursor rows are drawn afresh, the rest from cache.
func benchView(b *testing.B, nm, nt int) {
	snap := sceneBig(nm, nt)
	held := heldMB(func() any { return benchModel(snap) })
	m := benchModel(snap)
	keys := [2]tea.KeyPressMsg{keyMsg("j"), keyMsg("k")}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Update(keys[i%2])
		_ = m.View()
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/frame")
	b.ReportMetric(held, "heap-MB")
}

func BenchmarkView_100x1000(b *testing.B) { benchView(b, 100, 1000) }

func BenchmarkView_10x100(b *testing.B) { benchView(b, 10, 100) }

// BenchmarkViewUncached_100x1000 is the worst frame: nothing on screen is
// in the row cache (as after a page down to rows never seen).
func BenchmarkViewUncached_100x1000(b *testing.B) {
	m := benchModel(sceneBig(100, 1000))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clear(m.grid.cache)
		_ = m.View()
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/frame")
}

// BenchmarkApplySnapshot_100x1000 applies snapshots that each change one
// row, the usual case while a run goes on.
func BenchmarkApplySnapshot_100x1000(b *testing.B) {
	base := sceneBig(100, 1000)
	a := next(base)
	set(a, 500, 3, 0, status(state.Running))
	c := next(base)
	set(c, 500, 3, 0, completed(1, 10))
	m := benchModel(base)
	held := heldMB(func() any { return benchModel(base) })
	snaps := [2]tea.Msg{snapshotMsg{run: a}, snapshotMsg{run: c}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Update(snaps[i%2])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/snapshot")
	b.ReportMetric(held, "heap-MB")
}
