package gpu

import (
	"maps"
	"slices"
)

// downAfter is how many unavailable answers in a row mark a server down.
const downAfter = 3

// tpsAlpha weighs the newest request in a server's tokens/s average.
const tpsAlpha = 0.3

// jitKinds load a model when a request names it; the others (vllm, openai,
// unknown) serve every model they offer at all times.
var jitKinds = map[string]bool{"lmstudio": true, "ollama": true, "llamacpp": true, "sim": true}

// fleetServer is the fleet's record of one server. All fields after client are
// guarded by Fleet.mu.
type fleetServer struct {
	cfg    ServerConfig
	client *Client
	jit    bool

	offered    map[string]bool // nil until known (config or Discover)
	up         bool
	downReason string
	failures   int // unavailable answers in a row
	slots      []fleetSlot
	busy       int
	loads      map[string]chan struct{} // model -> closed when its warm-up ends
	tps        float64                  // moving average of completed requests' tokens/s
}

// fleetSlot is one of a server's parallel request places.
type fleetSlot struct {
	busy   bool
	model  string // the model it runs now, while busy
	served string // the last model it served: resident, as far as pitwall knows
}

func newServer(cfg ServerConfig, c *Client) *fleetServer {
	n := cfg.Slots
	if n <= 0 {
		n = 1
	}
	s := &fleetServer{cfg: cfg, client: c, jit: jitKinds[cfg.Kind], up: true,
		slots: make([]fleetSlot, n), loads: map[string]chan struct{}{}}
	if cfg.Models != nil {
		s.setOffered(cfg.Models)
	}
	return s
}

func (s *fleetServer) setOffered(models []string) {
	s.offered = make(map[string]bool, len(models))
	for _, m := range models {
		s.offered[m] = true
	}
}

func (s *fleetServer) free() int { return len(s.slots) - s.busy }

// resident is the set of models loaded now as far as the fleet has seen. A
// JIT server holds what its slots last served (a first version; a backend
// probe can tell better); the others hold everything they offer.
func (s *fleetServer) resident() map[string]bool {
	if !s.jit {
		return s.offered
	}
	out := make(map[string]bool, len(s.slots))
	for _, sl := range s.slots {
		if sl.served != "" {
			out[sl.served] = true
		}
	}
	return out
}

func (s *fleetServer) isResident(model string) bool {
	if !s.jit {
		return s.offered[model]
	}
	for _, sl := range s.slots {
		if sl.served == model {
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

// release frees slot i; served says its model answered, so it is resident.
func (s *fleetServer) release(i int, served bool) {
	sl := &s.slots[i]
	if served {
		sl.served = sl.model
	}
	sl.busy, sl.model = false, ""
	s.busy--
}

// observe updates the server's health from one request's outcome and
// reports whether it went up or down. Any HTTP answer shows the server is
// there; only unavailable answers count towards marking it down, and a
// timeout or a cancellation says nothing either way.
func (s *fleetServer) observe(err error) (changed bool) {
	switch ClassOf(err) {
	case ClassUnavailable:
		s.failures++
		if s.up && s.failures >= downAfter {
			s.up, s.downReason = false, err.Error()
			return true
		}
	case ClassTimeout, ClassCanceled:
	default:
		s.failures = 0
		if !s.up {
			s.up, s.downReason = true, ""
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

// setDown marks the server down now, for reason (Discover found it unreachable).
func (s *fleetServer) setDown(reason string) bool {
	changed := s.up
	s.up, s.downReason, s.failures = false, reason, downAfter
	return changed
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

// view is what the placement policy sees of the server. Offered (and
// Resident, for servers that are not JIT) are the fleet's own maps: a
// policy reads them and must not change them.
func (s *fleetServer) view() ServerView {
	v := ServerView{
		Name: s.cfg.Name, Up: s.up && s.offered != nil, Slots: len(s.slots), Busy: s.busy,
		Offered: s.offered, Resident: s.resident(), Loading: s.loading(), JIT: s.jit,
		Streaming: map[string]int{},
	}
	for _, sl := range s.slots {
		if sl.busy {
			v.Streaming[sl.model]++
		}
	}
	return v
}

// state is the fleet panel's view of the server; queue is filled by the fleet.
func (s *fleetServer) state() ServerState {
	st := ServerState{
		Name: s.cfg.Name, Kind: s.cfg.Kind, URL: s.cfg.URL, Up: s.up, DownReason: s.downReason,
		Slots: len(s.slots), Busy: s.busy, Loading: s.loading(), TokensPerSec: s.tps,
		Offered: slices.Sorted(maps.Keys(s.offered)), Resident: slices.Sorted(maps.Keys(s.resident())),
	}
	return st
}
