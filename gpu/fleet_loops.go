package gpu

import (
	"time"

	"pitwall/gpu/chat"
)

// Agent loops: a loop's steps reach the fleet one at a time, each once the
// caller has answered the previous step's tool calls. Between two steps the
// loop's model has nothing queued or streaming, and a policy that saw only
// that would load another model's queued work over it, and load it back for
// the next step: a load per step. So a step's job says how many steps its
// loop may still take (Job.Steps, counted by placement as that much work),
// and a step that ends in tool calls leaves a hold on its server: the steps
// still to come, shown to the policy as ServerView.Expected, which keeps
// the model there, until the loop's next step is queued or the hold ends
// (the loop ended after all, or its caller is slow).

// DefaultLoopHold is how long a server keeps an agent loop's model for its
// next step by default: far longer than a caller takes to answer a step's
// tool calls, far shorter than a model load.
const DefaultLoopHold = 2 * time.Second

// loopHold is one loop waiting for its next step on a server.
type loopHold struct {
	model string
	steps int       // steps the loop may still take
	until time.Time // Fleet.now time at which the hold ends
}

// loopHoldFor is the hold the fleet's options ask for.
func (f *Fleet) loopHoldFor() time.Duration {
	switch {
	case f.opts.LoopHold < 0:
		return 0
	case f.opts.LoopHold == 0:
		return DefaultLoopHold
	}
	return f.opts.LoopHold
}

// holdLoopLocked leaves a hold on s for j's loop when j, a step that
// answered res, will be followed by another: it has steps left and ended
// in tool calls (a reply without one ends the loop).
func (f *Fleet) holdLoopLocked(s *fleetServer, j *Job, res chat.Result) {
	hold := f.loopHoldFor()
	if j.Loop == "" || j.Steps <= 1 || len(res.ToolCalls) == 0 || hold <= 0 {
		return
	}
	if s.holds == nil {
		s.holds = map[string]loopHold{}
	}
	s.holds[j.Loop] = loopHold{model: j.Request.Model, steps: j.Steps - 1, until: f.now().Add(hold)}
	f.wakeMonitor() // to wake the dispatcher when the hold ends
}

// releaseLoopLocked ends the holds of loop: its next step is queued, and
// counts as its work from now on.
func (f *Fleet) releaseLoopLocked(loop string) {
	for _, s := range f.servers {
		delete(s.holds, loop)
	}
}

// expected is the policy's view of s's holds at now: per model, the steps
// its loops may still take (nil when none).
func (s *fleetServer) expected(now time.Time) map[string]int {
	var out map[string]int
	for _, h := range s.holds {
		if !now.Before(h.until) {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[h.model] += h.steps
	}
	return out
}

// nextHoldEnd drops s's holds that ended by now, reporting whether it
// dropped any (the policy may place what they held back), and says when
// the next one ends.
func (s *fleetServer) nextHoldEnd(now time.Time) (next time.Time, ok, dropped bool) {
	for loop, h := range s.holds {
		if !now.Before(h.until) {
			delete(s.holds, loop)
			dropped = true
			continue
		}
		if next.IsZero() || h.until.Before(next) {
			next = h.until
		}
	}
	return next, !next.IsZero(), dropped
}
