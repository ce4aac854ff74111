package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"pitwall/runner/ledger"
)

// ownerFresh is how long after a heartbeat the ledger took this process may
// send for the run without asking the ledger again. Another host takes a
// run over only once it has been silent for ledger.Lease (2 minutes) by
// that host's clock, so nothing sent within a few heartbeats of one the
// ledger took can follow a take-over. Past it (the process was stopped,
// the machine slept, the loop fell behind) the gate asks the ledger first.
const ownerFresh = 3 * ledger.HeartbeatEvery

// ownerGate is the fleet's BeforeSend for a run's jobs (gpu.Job.BeforeSend,
// and the judge batches a Batch API takes): whether this process still owns
// the run. The ledger refuses every write of a superseded owner (fencing),
// but a request is not a write: a process that wakes after another took
// its run over would send what its fleet had queued before its first
// refused write told it. So the last heartbeat the ledger took is kept by
// both clocks (a paused process sees both jump; a sleeping machine only
// the wall clock), and a send long after it makes a heartbeat first: one
// refused stops the run as any refused write does, and nothing is sent.
//
// In a run whose heartbeats keep up the gate reads two atomics and writes
// nothing; it is armed only while the run is held (from CreateRun or
// ResumeRun until FinishRun): re-judging a finished run needs no lease.
type ownerGate struct {
	led  *ledger.Ledger
	run  string
	now  func() time.Time // the run's clock, for the heartbeat it writes
	post func(error)      // tells the loop of a refusal: it stops, as after a refused write

	base     time.Time    // the origin of beatMono, with a monotonic reading
	armed    atomic.Bool  // the run is held
	beatMono atomic.Int64 // the last heartbeat the ledger took: since base, monotonic
	beatWall atomic.Int64 // and by the wall clock, in Unix nanoseconds
	checks   atomic.Int64 // heartbeats the gate made itself (none while heartbeats keep up)

	mu   sync.Mutex // one heartbeat of the gate's at a time: the others wait on its answer
	lost error      // the refusal, once one came: every later send gets it
}

func newOwnerGate(led *ledger.Ledger, run string, now func() time.Time, post func(error)) *ownerGate {
	return &ownerGate{led: led, run: run, now: now, post: post, base: time.Now()}
}

// hold arms the gate for a run the ledger took at t (time.Now before the
// write: CreateRun, ResumeRun).
func (g *ownerGate) hold(t time.Time) {
	g.confirm(t)
	g.armed.Store(true)
}

// release disarms it: the run's end is recorded, and nothing is leased.
func (g *ownerGate) release() { g.armed.Store(false) }

// confirm records a heartbeat the ledger took, t being time.Now read
// before it was written.
func (g *ownerGate) confirm(t time.Time) {
	g.beatMono.Store(int64(t.Sub(g.base)))
	g.beatWall.Store(t.UnixNano())
}

// fresh says whether the last heartbeat the ledger took is younger than
// ownerFresh by both clocks at now. A clock gone backwards is not fresh:
// asking the ledger once costs little.
func (g *ownerGate) fresh(now time.Time) bool {
	mono := time.Duration(int64(now.Sub(g.base)) - g.beatMono.Load())
	wall := time.Duration(now.UnixNano() - g.beatWall.Load())
	return mono >= 0 && mono < ownerFresh && wall >= 0 && wall < ownerFresh
}

// check is the gate: nil lets a request go.
func (g *ownerGate) check(context.Context) error {
	if !g.armed.Load() {
		return nil
	}
	if g.fresh(time.Now()) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost != nil {
		return g.lost
	}
	t := time.Now()
	if g.fresh(t) {
		return nil // another send's heartbeat answered while this one waited
	}
	g.checks.Add(1)
	if err := g.led.Heartbeat(g.run, g.now()); err != nil {
		// Posted before any job hears it, so that the loop knows why its
		// jobs end unsent before the first of them arrives.
		g.lost = err
		g.post(err)
		return err
	}
	g.confirm(t)
	return nil
}
