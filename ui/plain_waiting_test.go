package ui

import (
	"strings"
	"testing"
	"time"

	"pitwall/gpu/telemetry"
	"pitwall/runner/state"
)

// sceneRateLimited is mid-inference with its one server holding work back
// on a 429's Retry-After of a day.
func sceneRateLimited(seq uint64, until time.Time) *state.BatteryRun {
	run := sceneMidInference()
	run.Seq = seq
	run.Fleet = []telemetry.ServerState{{Name: "s0", Kind: "vllm", Up: true, Slots: 1, Queue: 2,
		HeldUntil: until, RetryAfter: 24 * time.Hour}}
	return run
}

// Not parallel: it shortens waitingEvery, which every headless run reads.
func TestRunPlainRepeatsTheWaitingLineWhileWorkWaits(t *testing.T) {
	defer func(d time.Duration) { waitingEvery = d }(waitingEvery)
	waitingEvery = 20 * time.Millisecond

	until := time.Now().Add(24 * time.Hour)
	const waits = 4
	ch := make(chan *state.BatteryRun)
	go func() {
		for i := range waits {
			ch <- sceneRateLimited(uint64(10+i), until) // what waits does not change
			time.Sleep(2 * waitingEvery)
		}
		last := sceneMidInference()
		last.Seq, last.Final = 20, true
		ch <- last
	}()
	_, _, stderr := runPlain(t, ch, Options{})
	want := "waiting on s0 rate-limited until " + until.Format("15:04:05") + " (asked to retry after 24h00m): 2 waiting"
	if !strings.Contains(stderr, want) {
		t.Errorf("headless output lacks %q:\n%s", want, stderr)
	}
	if n := strings.Count(stderr, "waiting on"); n != waits {
		t.Errorf("the waiting line came %d times over %d snapshots each a period apart, want %d:\n%s", n, waits, waits, stderr)
	}
}

func TestTheHeaderSaysWhatWaitsOnARateLimitedServer(t *testing.T) {
	t.Parallel()
	now := time.Now()
	run := sceneRateLimited(10, now.Add(90*time.Second))
	got := waiting(run, now)
	want := "waiting on s0 rate-limited until " + now.Add(90*time.Second).Format("15:04:05") + " (asked to retry after 24h00m): 2 waiting"
	if got != want {
		t.Errorf("waiting = %q, want %q", got, want)
	}
	if got := waiting(sceneRateLimited(11, now.Add(-time.Second)), now); got != "" {
		t.Errorf("a hold that has ended still shows: %q", got)
	}
}
