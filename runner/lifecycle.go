package runner

import "fmt"

// lifecycle is where a run stands. The loop alone moves it, and only along
// the transitions below.
//
//	idle ──► inferring ──► judging ──► ended ──► closing ──► closed
//	  │          │  ╲          │         ▲
//	  │          │   ╲─────────┼─────────┤ (nothing to judge)
//	  │          └────► stopping ◄───────┘ (Stop, Close, a ledger failure)
//	  ├─────────────────────────────────► ended (Reopen: a run read back)
//	  └──────────────────────────────────────────────────────► closed
type lifecycle int

const (
	idle      lifecycle = iota // made; nothing sent
	inferring                  // phase 1 (and judging, when pipelined)
	judging                    // phase 2
	stopping                   // cancelling what is in flight; the run ends stopped or failed
	ended                      // the end is in the ledger; re-judging may still run
	closing                    // Close: cancelling re-judging, then the loop returns
	closed
)

var lifecycleNames = [...]string{"idle", "inferring", "judging", "stopping", "ended", "closing", "closed"}

func (l lifecycle) String() string { return lifecycleNames[l] }

// next lists the lifecycles each may move to.
var next = map[lifecycle][]lifecycle{
	idle:      {inferring, ended, closed}, // ended: a finished run read back (Reopen)
	inferring: {judging, stopping, ended},
	judging:   {stopping, ended},
	stopping:  {ended},
	ended:     {closing},
	closing:   {closed},
}

// canMove reports whether from may move to to.
func canMove(from, to lifecycle) bool {
	for _, l := range next[from] {
		if l == to {
			return true
		}
	}
	return false
}

// move changes the engine's lifecycle; a move the table does not allow is
// a bug in the loop and panics, so that tests find it.
func (e *engine) move(to lifecycle) {
	if !canMove(e.life, to) {
		panic(fmt.Sprintf("runner: lifecycle %s cannot move to %s", e.life, to))
	}
	e.life = to
	e.pub.dirty = true
	if !to.live() && e.r != nil {
		// What the judging was expected to send and did not (cached
		// verdicts, a stop) must not load a model after the run.
		if x, ok := e.r.fleet.(expecter); ok && len(e.wanted) > 0 {
			x.Expect(nil)
		}
	}
}

// live reports whether the run's phases are still going.
func (l lifecycle) live() bool { return l == inferring || l == judging || l == stopping }
