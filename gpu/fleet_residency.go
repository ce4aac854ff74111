package gpu

import (
	"cmp"
	"maps"
	"slices"

	"pitwall/gpu/placement"
)

// Residency: which models a JIT server holds in VRAM, as the fleet knows it.
//
// The fleet is the one that loads models (its warm-ups), so it follows each
// load and the evictions the server makes for it, the way the servers
// choose them: least recently used idle models first, never one that is
// streaming. Probes correct the picture when the server changed on its own
// (a keep-alive expiry, another client, a restart), but only from a probe
// that saw the server at rest: one that raced a load of the fleet's own
// would bring back a model the load has just evicted.

// vramEps absorbs float error in sums of model sizes.
const vramEps = 1e-9

// residency is the set of models a server holds, with their order of use.
type residency struct {
	lru map[string]uint64 // model -> order of last use
	seq uint64
	// ver changes with every change of the set the fleet makes, so that a
	// probe that started before it can tell its reading is stale.
	ver uint64
}

func newResidency() residency { return residency{lru: map[string]uint64{}} }

func (r *residency) has(m string) bool {
	_, ok := r.lru[m]
	return ok
}

// set is the models held, as a new map.
func (r *residency) set() map[string]bool {
	out := make(map[string]bool, len(r.lru))
	for m := range r.lru {
		out[m] = true
	}
	return out
}

// touch marks m as used now, when it is held.
func (r *residency) touch(m string) {
	if _, ok := r.lru[m]; ok {
		r.seq++
		r.lru[m] = r.seq
	}
}

func (r *residency) add(m string) {
	r.seq++
	r.lru[m] = r.seq
	r.ver++
}

func (r *residency) evict(m string) {
	delete(r.lru, m)
	r.ver++
}

// rename calls the held model from by the name to, keeping its order of
// use: a server reported it in its own spelling before the fleet met the
// name. What the server holds is the same, so probes in flight stay good.
func (r *residency) rename(from, to string) {
	r.alias(from, to)
	delete(r.lru, from)
}

// alias holds to as well as from (two of the fleet's names for one of the
// server's models), as recently used.
func (r *residency) alias(from, to string) {
	if seq, ok := r.lru[from]; ok {
		r.lru[to] = max(r.lru[to], seq)
	}
}

// reset replaces the set with models (as a server reported them), keeping
// the order of use of those it held already; the others count as least
// recently used.
func (r *residency) reset(models []string) {
	next := make(map[string]uint64, len(models))
	for _, m := range models {
		next[m] = r.lru[m]
	}
	r.lru = next
	r.ver++
}

// usedGB is the VRAM the held models and the loads in flight take, and
// whether every one of their sizes is known.
func (r *residency) usedGB(models map[string]placement.ModelView, loads map[string]chan struct{}) (float64, bool) {
	var used float64
	for m := range r.lru {
		sz := models[m].SizeGB
		if sz <= 0 {
			return 0, false
		}
		used += sz
	}
	for m := range loads {
		if r.has(m) {
			continue
		}
		sz := models[m].SizeGB
		if sz <= 0 {
			return 0, false
		}
		used += sz
	}
	return used, true
}

// sized reports whether the fleet can reckon s's VRAM for model m: the
// server's size, m's and every held model's are known.
func (s *fleetServer) sized(m string, models map[string]placement.ModelView) (total, used float64, ok bool) {
	total = s.seen.vramTotalGB
	used, known := s.res.usedGB(models, s.loads)
	return total, used, known && total > 0 && models[m].SizeGB > 0
}

// beginLoad follows what the server does as a load of m starts (call it
// before m joins s.loads): it evicts the least recently used idle models
// that make room, when they do. When sizes are unknown it takes the server
// to hold one model at a time, as the policy does, and drops every idle one.
func (s *fleetServer) beginLoad(m string, models map[string]placement.ModelView) {
	s.res.ver++ // a load under way makes any probe in flight stale
	total, used, ok := s.sized(m, models)
	if !ok {
		for x := range s.res.lru {
			if x != m && !s.streaming(x) {
				s.res.evict(x)
			}
		}
		return
	}
	need := models[m].SizeGB - (total - used)
	if need <= vramEps {
		return
	}
	victims, freed := s.evictionOrder(m), 0.0
	for i, x := range victims {
		if s.streaming(x) {
			// The server waits for these to drain; loaded will evict them.
			return
		}
		if freed += models[x].SizeGB; freed >= need-vramEps {
			for _, v := range victims[:i+1] {
				s.res.evict(v)
			}
			return
		}
	}
}

// loaded records m as held now, evicting the least recently used idle
// models while the held set overflows the VRAM (a load that had to wait
// for a drain evicts then).
func (s *fleetServer) loaded(m string, models map[string]placement.ModelView) {
	s.res.add(m)
	total, used, ok := s.sized(m, models)
	if !ok {
		return
	}
	for _, x := range s.evictionOrder(m) {
		if used <= total+vramEps || s.streaming(x) {
			return
		}
		s.res.evict(x)
		used -= models[x].SizeGB
	}
}

// served records that a request for m answered: m is held. A request that
// found m not loaded loaded it itself (a warm-up that failed, or a policy
// that does not warm up), evicting as a load does.
func (s *fleetServer) served(m string, models map[string]placement.ModelView) {
	if !s.jit {
		return
	}
	if s.res.has(m) {
		s.res.touch(m)
		return
	}
	s.beginLoad(m, models)
	s.loaded(m, models)
}

// evictionOrder is the held models other than m in the order a server
// evicts them: idle before streaming, then least recently used.
func (s *fleetServer) evictionOrder(m string) []string {
	out := slices.DeleteFunc(slices.Collect(maps.Keys(s.res.lru)), func(x string) bool { return x == m })
	slices.SortFunc(out, func(a, b string) int {
		if sa, sb := s.streaming(a), s.streaming(b); sa != sb {
			if sb {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(s.res.lru[a], s.res.lru[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return out
}

// adoptResidency takes a probe's list of held models (ver is s.res.ver when
// the probe started), unless the fleet changed the set since or a load is
// under way; force takes it in any case (a server that rejoins).
func (s *fleetServer) adoptResidency(resident []string, ver uint64, force bool) {
	if !s.jit || resident == nil {
		return
	}
	if !force && (s.res.ver != ver || len(s.loads) > 0) {
		return
	}
	cur := s.res.set()
	same := len(cur) == len(resident)
	for _, m := range resident {
		same = same && cur[m]
	}
	if !same || force {
		s.res.reset(resident)
	}
}
