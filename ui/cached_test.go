package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/runner/state"
)

// A cell whose answer was reused from the ledger (--reuse) says cached on
// its headless line and in the grid's figures, not timings of this run.
func TestReusedCellsSayCached(t *testing.T) {
	t.Parallel()
	g := glyphsFor(false)
	reused := &state.Cell{Model: "m", Test: "t", Status: state.Completed, Server: chat.ServerCache,
		Latency: 850 * time.Millisecond, TokensPerSec: 40}
	fresh := &state.Cell{Model: "m", Test: "t", Status: state.Completed, Server: "gpu0",
		Latency: 850 * time.Millisecond, TokensPerSec: 40}

	p := newPlain(&bytes.Buffer{}, Options{})
	if got := p.outcome(reused); !strings.Contains(got, "cached") || strings.Contains(got, "850ms") {
		t.Errorf("reused cell's line ends %q, want cached and no timing", got)
	}
	if got := p.outcome(fresh); strings.Contains(got, "cached") || !strings.Contains(got, "850ms") {
		t.Errorf("fresh cell's line ends %q, want its timing", got)
	}

	if got := showCell([]*state.Cell{reused}, "", figLatency, &g, 0).text; !strings.Contains(got, "cache") {
		t.Errorf("latency figure of a reused cell is %q, want cache", got)
	}
	if got := showCell([]*state.Cell{fresh}, "", figLatency, &g, 0).text; !strings.Contains(got, "850ms") {
		t.Errorf("latency figure of a fresh cell is %q, want 850ms", got)
	}
	// Repeats mixing the two: the figure is the fresh ones' alone.
	slow := *fresh
	slow.Latency = 2 * time.Second
	reusedSlow := *reused
	reusedSlow.Latency = time.Hour
	if got := showCell([]*state.Cell{&slow, &reusedSlow}, "", figLatency, &g, 0).text; !strings.Contains(got, "2.00s") {
		t.Errorf("latency figure over a fresh and a reused repeat is %q, want the fresh one's 2s", got)
	}
}
