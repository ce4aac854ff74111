package cli

import (
	"runtime"
	"testing"
)

// TestAllocationsAreSampledOnlyForAHeapProfile: the binary samples its
// allocations (a stack walk every 512 KiB) only when PITWALL_HEAPPROFILE
// asks for the heap, and then at Go's own rate.
func TestAllocationsAreSampledOnlyForAHeapProfile(t *testing.T) {
	t.Setenv(envHeapProfile, "")
	if got := MemProfileRate(); got != 0 {
		t.Errorf("without %s: rate %d, want 0 (no sampling)", envHeapProfile, got)
	}
	t.Setenv(envHeapProfile, t.TempDir()+"/heap.pprof")
	if got := MemProfileRate(); got != runtime.MemProfileRate || got == 0 {
		t.Errorf("with %s: rate %d, want Go's %d", envHeapProfile, got, runtime.MemProfileRate)
	}
}
