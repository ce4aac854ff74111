package gpu

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/gpu/telemetry"
)

// downAfter is how many unavailable answers in a row mark a server down.
const downAfter = 3

// tpsAlpha weighs the newest request in a server's tokens/s average.
const tpsAlpha = 0.3

// errServerDown ends the requests in flight on a server the fleet has marked
// down: they may hang on a dead connection far longer than a probe takes to
// notice, and other servers can run them now.
var errServerDown = errors.New("the server went down")

// fleetServer is the fleet's record of one server. All fields after client are
// guarded by Fleet.mu.
type fleetServer struct {
	cfg    ServerConfig
	client *client.Client

	jit  bool
	kind chat.Kind // cfg.Kind, or what a probe detected when it is ""

	// listed is what the server says it offers, in its own spelling; nil
	// until known (config or Discover). offered is the fleet's names it
	// offers (placement's ServerView.Offered), sends the name to send it
	// for each name the fleet has met ("" when not offered), back the
	// fleet's names for each of its own (fleet_names.go).
	listed     []string
	offered    map[string]bool
	sends      map[string]string
	back       map[string][]string
	up         bool
	downReason string
	downSince  time.Time // when it last went down
	failures   int       // unavailable answers in a row
	slots      []fleetSlot
	busy       int
	loads      map[string]chan struct{} // model -> closed when its warm-up ends
	tps        float64                  // moving average of completed requests' tokens/s
	// heldUntil: the server answered 429 with Retry-After; nothing new is
	// sent to it before then. heldFor is the wait it asked for.
	heldUntil time.Time
	heldFor   time.Duration
	// budget holds the server to its rate limits (fleet_budget.go).
	budget budget

	// holds are the agent loops whose model the server keeps for their next
	// step, by loop (fleet_loops.go).
	holds map[string]loopHold
	res   residency    // models loaded, as far as the fleet knows (JIT servers)
	seen  serverReport // what probes and telemetry said last
	probe probeSched
	// check is closed when the confirmation ping in flight ends (nil when
	// none is): jobs that failed together share one ping.
	check chan struct{}
}

// fleetSlot is one of a server's parallel request places.
type fleetSlot struct {
	busy   bool
	model  string // the model it runs now, while busy
	served string // the last model it served, for the choice of slot
	// cancel ends the job on the slot (errServerDown when the server goes down).
	cancel context.CancelCauseFunc
}

// serverReport is what the fleet last read of a server from outside.
type serverReport struct {
	vramTotalGB, vramUsedGB float64 // 0 when unknown
	gpus                    []telemetry.GPUState
}

func newServer(cfg ServerConfig, c *client.Client) *fleetServer {
	n := cfg.Slots
	if n <= 0 {
		n = 1
	}
	s := &fleetServer{cfg: cfg, client: c, jit: cfg.Kind.JIT(), kind: cfg.Kind, up: true,
		slots: make([]fleetSlot, n), loads: map[string]chan struct{}{}, res: newResidency(),
		sends: map[string]string{}, budget: newBudget(cfg.RPM, cfg.TPM)}
	if cfg.Models != nil {
		s.setOffered(cfg.Models)
	}
	return s
}

func (s *fleetServer) free() int { return len(s.slots) - s.busy }

// holdEnd is when the server takes new work again: the end of a 429's
// Retry-After, or of a wait its rate-limit budget asks; now or before when
// nothing holds it.
func (s *fleetServer) holdEnd(now time.Time) time.Time {
	end := s.heldUntil
	if w := s.budget.wait(now); w > 0 && now.Add(w).After(end) {
		end = now.Add(w)
	}
	return end
}

// held reports whether the server is rate-limited at now.
func (s *fleetServer) held(now time.Time) bool {
	return now.Before(s.holdEnd(now))
}

// takesWork reports whether new jobs may start on the server at now.
func (s *fleetServer) takesWork(now time.Time) bool {
	return s.up && s.offered != nil && s.free() > 0 && !s.held(now)
}

// resident is the set of models loaded now as far as the fleet knows. A
// server that is not JIT holds everything it offers.
func (s *fleetServer) resident() map[string]bool {
	if !s.jit {
		return s.offered
	}
	return s.res.set()
}

func (s *fleetServer) isResident(model string) bool {
	if !s.jit {
		return s.offered[model]
	}
	return s.res.has(model)
}

// streaming reports whether a busy slot runs model.
func (s *fleetServer) streaming(model string) bool {
	for _, sl := range s.slots {
		if sl.busy && sl.model == model {
			return true
		}
	}
	return false
}

// loading names a model whose warm-up is in flight ("" when none).
func (s *fleetServer) loading() string {
	if len(s.loads) == 0 {
		return ""
	}
	return slices.Sorted(maps.Keys(s.loads))[0]
}

// acquire takes a free slot for model and returns its index. It prefers a
// slot that last served the same model, then an unused one, then one whose
// model another slot also holds, so that the resident set changes least.
func (s *fleetServer) acquire(model string) int {
	best, rank := -1, 99
	for i, sl := range s.slots {
		if sl.busy {
			continue
		}
		r := 3
		switch {
		case sl.served == model:
			r = 0
		case sl.served == "":
			r = 1
		case s.servedElsewhere(i):
			r = 2
		}
		if r < rank {
			best, rank = i, r
		}
	}
	s.slots[best].busy = true
	s.slots[best].model = model
	s.busy++
	return best
}

func (s *fleetServer) servedElsewhere(i int) bool {
	for j, sl := range s.slots {
		if j != i && sl.served == s.slots[i].served {
			return true
		}
	}
	return false
}

// release frees slot i; served says its model answered.
func (s *fleetServer) release(i int, served bool) {
	sl := &s.slots[i]
	if served {
		sl.served = sl.model
	}
	sl.busy, sl.model, sl.cancel = false, "", nil
	s.busy--
}

// observe updates the server's health from one request's outcome and
// reports whether it went up or down. Any HTTP answer shows the server is
// there; only unavailable answers count towards marking it down, and a
// timeout or a cancellation says nothing either way.
func (s *fleetServer) observe(err error) (changed bool) {
	switch chat.ClassOf(err) {
	case chat.ClassUnavailable:
		s.failures++
		if s.up && s.failures >= downAfter {
			s.markDown(err.Error())
			return true
		}
	case chat.ClassTimeout, chat.ClassCanceled:
	default:
		s.failures = 0
		if !s.up {
			s.markUp()
			return true
		}
	}
	return false
}

// healthChange is what observeHealth saw, for logging outside the lock.
type healthChange struct {
	changed, up bool
	reason      string
}

func (s *fleetServer) observeHealth(err error) healthChange {
	return healthChange{changed: s.observe(err), up: s.up, reason: s.downReason}
}

// setDown marks the server down now, for reason (Discover or a probe found
// it unreachable).
func (s *fleetServer) setDown(reason string) bool {
	changed := s.up
	if changed {
		s.markDown(reason)
	} else {
		s.downReason = reason
	}
	s.failures = downAfter
	return changed
}

// markDown takes the server out of placement: what it held is unknown from
// now on, the jobs in flight on it end (errServerDown) so that they can run
// elsewhere, and probes look for it with backoff.
func (s *fleetServer) markDown(reason string) {
	s.up, s.downReason, s.downSince = false, reason, time.Now()
	s.res.reset(nil)
	clear(s.holds)
	for i := range s.slots {
		sl := &s.slots[i]
		sl.served = ""
		if sl.busy && sl.cancel != nil {
			sl.cancel(errServerDown)
		}
	}
	s.probe.down()
}

// markUp puts the server back into placement.
func (s *fleetServer) markUp() {
	s.up, s.downReason, s.downSince, s.failures = true, "", time.Time{}, 0
	s.probe.rejoined()
}

// noteTPS folds one completed request's decode rate into the average.
func (s *fleetServer) noteTPS(tps float64) {
	s.tps = movingAvg(s.tps, tps)
}

// movingAvg is an exponential moving average that starts at the first sample.
func movingAvg(avg, x float64) float64 {
	if x <= 0 {
		return avg
	}
	if avg == 0 {
		return x
	}
	return tpsAlpha*x + (1-tpsAlpha)*avg
}

// vram is the server's memory and what its models hold, in GB, as the
// fleet knows it: the sizes of the models it holds when every one is known,
// else what the server or telemetry last reported; 0 when unknown.
func (s *fleetServer) vram(models map[string]placement.ModelView) (total, used float64) {
	total, used = s.seen.vramTotalGB, s.seen.vramUsedGB
	if !s.jit {
		return total, used
	}
	if sum, ok := s.res.usedGB(models, s.loads); ok {
		used = sum
	}
	return total, used
}

// view is what the placement policy sees of the server at now. Offered
// (and Resident, for servers that are not JIT) are the fleet's own maps: a
// policy reads them and must not change them. A rate-limited server shows
// no free slot, so that no policy sends it work before its Retry-After.
func (s *fleetServer) view(now time.Time, models map[string]placement.ModelView) placement.ServerView {
	v := placement.ServerView{
		Name: s.cfg.Name, Up: s.up && s.offered != nil, Slots: len(s.slots), Busy: s.busy,
		Offered: s.offered, Resident: s.resident(), Loading: s.loading(), JIT: s.jit,
		Streaming: map[string]int{},
	}
	if s.held(now) {
		v.Busy = v.Slots
	}
	v.VRAMTotalGB, v.VRAMUsedGB = s.vram(models)
	v.Expected = s.expected(now)
	for _, sl := range s.slots {
		if sl.busy {
			v.Streaming[sl.model]++
		}
	}
	return v
}

// state is the fleet panel's view of the server; queue and GPUs from
// telemetry are filled by the fleet.
func (s *fleetServer) state(now time.Time, models map[string]placement.ModelView) telemetry.ServerState {
	st := telemetry.ServerState{
		Name: s.cfg.Name, Kind: string(s.kind), URL: s.cfg.URL, Up: s.up, DownReason: s.downReason, DownSince: s.downSince,
		Slots: len(s.slots), Busy: s.busy, Loading: s.loading(), TokensPerSec: s.tps,
		Offered: slices.Sorted(slices.Values(s.listed)), Resident: slices.Sorted(maps.Keys(s.resident())),
		GPUs: slices.Clone(s.seen.gpus),
	}
	if end := s.holdEnd(now); now.Before(end) {
		st.HeldUntil, st.RetryAfter = end, s.heldFor
		if end.After(s.heldUntil) {
			st.RetryAfter = end.Sub(now) // the budget's wait, not a 429's
		}
	}
	if s.up {
		st.VRAMTotalGB, st.VRAMUsedGB = s.vram(models)
	}
	return st
}
