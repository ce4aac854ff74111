package placement

import (
	"cmp"
	"maps"
	"slices"
)

// Loads: which model a server with a free slot and nothing present to run
// loads next, and when a server loads its next model early (prefetch).

// prefetch lets a server whose present models are about to run out of work
// load the next unserved model beside them now, on one slot: the load then
// overlaps their last jobs instead of idling the GPU after them. It loads
// only into room that is free or held by models with nothing left to do, so
// nothing with work is evicted.
func (st *placeState) prefetch(c jobClass, s *placeServer, ms []string) {
	if !s.view.JIT || s.loading != "" || s.free == 0 || len(ms) == 0 {
		return
	}
	var left float64
	for _, m := range ms {
		left += float64(st.left(c, m, s)) * st.jobTime(c, m) / float64(max(st.serving[m], 1))
	}
	if c == classInference {
		// A loop's steps still to come keep its model busy here as well.
		for _, m := range slices.Sorted(maps.Keys(s.view.Expected)) {
			if s.present[m] && !slices.Contains(ms, m) {
				left += float64(st.left(c, m, s)) * st.jobTime(c, m) / float64(max(st.serving[m], 1))
			}
		}
	}
	left /= float64(max(s.view.Slots, 1))
	f := st.p.PrefetchFactor
	if f <= 0 {
		f = 1
	}
	// As for a swap (load), a model no server holds goes before a second
	// copy of one that some server holds: it has to be loaded somewhere.
	anyUnserved := false
	for _, m := range st.models(c, s) {
		if _, fitsEver, _ := st.fit(s, m); fitsEver && !s.present[m] && st.unserved(c, m, s) {
			anyUnserved = true
		}
	}
	best, bestWork := "", 0.0
	for _, m := range st.models(c, s) {
		load := st.v.Models[m].LoadTime.Seconds()
		// A second copy may go ahead too, once no model is left unserved:
		// the server that spreads a model would otherwise load it after
		// its own models' last jobs, with nothing running.
		spread := !anyUnserved && st.worthSpreading(c, m, s)
		if s.present[m] || !st.unserved(c, m, s) && !spread || left > f*load || !st.fitsBeside(s, m) {
			continue
		}
		w := float64(st.left(c, m, s)) * st.jobTime(c, m)
		if best != "" && st.judgeLast(c, m) != st.judgeLast(c, best) {
			if st.judgeLast(c, best) {
				best, bestWork = m, w
			}
			continue
		}
		if best == "" || w > bestWork || w == bestWork && st.v.Models[m].LoadTime > st.v.Models[best].LoadTime {
			best, bestWork = m, w
		}
	}
	if best == "" && c == classInference {
		st.prefetchUpcoming(s, left)
		return
	}
	if best == "" || !st.take(c, best, s) {
		return
	}
	s.present[best], s.loading = true, best
	s.usedGB += st.v.Models[best].SizeGB
	st.serving[best]++
}

// prefetchUpcoming lets a server load, on one free slot, a model whose
// jobs are not queued yet (FleetView.Upcoming: the judging to come), once
// inference needs no more loads there and the work it has left on the
// server (left, in seconds per slot) would end within the load: the load
// then overlaps the end of inference instead of idling the GPU after it.
// Like prefetch, it loads only into room that is free or held by models
// with nothing left to do, and a second copy only where the work to come
// would keep the servers that hold the model busy longer than spreading
// asks (worthSpreading). It reports whether it started a load.
func (st *placeState) prefetchUpcoming(s *placeServer, left float64) bool {
	if len(st.v.Upcoming) == 0 || !s.view.JIT || s.loading != "" || s.free == 0 || s.reserved {
		return false
	}
	for _, m := range st.models(classInference, s) {
		if s.present[m] {
			continue
		}
		// A model s may still have to load for inference: a load ahead of
		// the judging could be evicted unused.
		if pm := st.pinned[s.view.Name]; pm != nil && pm[classInference][m].left() > 0 {
			return false
		}
		if st.serving[m] == 0 || st.worthSpreading(classInference, m, s) {
			return false
		}
	}
	f := st.p.PrefetchFactor
	if f <= 0 {
		f = 1
	}
	best, bestUnserved, bestWork := "", false, 0.0
	for _, m := range slices.Sorted(maps.Keys(st.v.Upcoming)) {
		n := st.v.Upcoming[m]
		if n <= 0 || !s.view.Offered[m] || s.present[m] || left > f*st.v.Models[m].LoadTime.Seconds() || !st.fitsBesideAny(s, m) {
			continue
		}
		k := st.serving[m]
		jobs := float64(n + st.left(classJudge, m, s))
		if k > 0 && !st.worthSpreadingJobs(m, s, jobs) {
			continue
		}
		w := jobs * st.jobTime(classJudge, m) / float64(k+1)
		// A model no server holds first; then the most work per copy,
		// then the longer load.
		better := best == ""
		if !better && (k == 0) != bestUnserved {
			better = k == 0
		} else if !better {
			better = w > bestWork || w == bestWork && st.v.Models[m].LoadTime > st.v.Models[best].LoadTime
		}
		if !better {
			continue
		}
		best, bestUnserved, bestWork = m, k == 0, w
	}
	if best == "" {
		return false
	}
	st.out = append(st.out, Assignment{Server: s.view.Name, Load: best})
	s.free--
	s.present[best], s.loading = true, best
	s.usedGB += st.v.Models[best].SizeGB
	st.serving[best]++
	return true
}

// fitsBeside reports whether m fits on s without evicting a model that is
// busy, has queued work, or is a judge model; with VRAM or sizes unknown it
// does not.
func (st *placeState) fitsBeside(s *placeServer, m string) bool {
	size, total := st.v.Models[m].SizeGB, s.view.VRAMTotalGB
	if size <= 0 || total <= 0 {
		return false
	}
	room := total - s.usedGB
	if st.awaitsStep(s) {
		return size <= room+1e-9
	}
	for x := range s.present {
		if s.busy(x) || st.v.JudgeModels[x] {
			continue
		}
		if st.left(classInference, x, s)+st.left(classJudge, x, s) > 0 {
			// The server evicts its least recently used idle model, which
			// could be this one.
			return false
		}
		room += st.v.Models[x].SizeGB
	}
	return size <= room+1e-9
}

// fitsBesideAny is fitsBeside for a load with no job of its own, which
// the server may carry out before this decision's jobs start streaming: it
// must fit whichever idle models the server evicts (its least recently
// used, which a model loaded ahead of its jobs is). Room held by an idle
// model counts only when no idle model has work queued or to come, or is
// a judge model.
func (st *placeState) fitsBesideAny(s *placeServer, m string) bool {
	size, total := st.v.Models[m].SizeGB, s.view.VRAMTotalGB
	if size <= 0 || total <= 0 {
		return false
	}
	room := total - s.usedGB
	if size <= room+1e-9 {
		return true
	}
	if st.awaitsStep(s) {
		return false
	}
	for _, x := range slices.Sorted(maps.Keys(s.present)) {
		// A model given jobs in this decision is as good as streaming:
		// its jobs start when the decision is applied.
		if s.view.Streaming[x] > 0 || s.placed[x] > 0 || x == s.loading {
			continue
		}
		if st.v.JudgeModels[x] || st.v.Upcoming[x] > 0 || st.left(classInference, x, s)+st.left(classJudge, x, s) > 0 {
			return false
		}
		room += st.v.Models[x].SizeGB
	}
	return size <= room+1e-9
}

// loadChoice is one model a server could load.
type loadChoice struct {
	model       string
	unserved    bool    // no up server holds it (or its pinned jobs need this one)
	fitsNow     bool    // loading it evicts nothing that is streaming
	evictsJudge bool    // loading it evicts a judge model
	judgeLast   bool    // a judge model's inference, which goes after the others' (judgeLast)
	work        float64 // queued work per server that would hold it, in seconds
}

// load lets servers with free slots and nothing present to run load a model
// of class c. Only one load runs on a server at a time.
func (st *placeState) load(c jobClass) {
	for _, s := range st.servers {
		if s.free == 0 || !s.view.JIT || s.loading != "" || (c == classJudge && s.reserved) {
			continue
		}
		var choices []loadChoice
		anyUnserved := false
		for _, m := range st.models(c, s) {
			if s.present[m] {
				continue
			}
			fitsNow, fitsEver, evictsJudge := st.fit(s, m)
			if !fitsEver {
				continue
			}
			k := st.serving[m]
			ch := loadChoice{
				model: m, unserved: st.unserved(c, m, s), fitsNow: fitsNow, evictsJudge: evictsJudge, judgeLast: st.judgeLast(c, m),
				work: float64(st.left(c, m, s)) * st.jobTime(c, m) / float64(k+1),
			}
			if !ch.unserved && (!st.worthSpreading(c, m, s) || c == classJudge && evictsJudge) {
				// A second copy of a judge model never pushes out another
				// judge model: more work for it may arrive at any moment.
				continue
			}
			anyUnserved = anyUnserved || ch.unserved
			choices = append(choices, ch)
		}
		if anyUnserved {
			// Every model must be loaded somewhere once; a second copy of
			// another model can wait until none is left unserved.
			choices = slices.DeleteFunc(choices, func(ch loadChoice) bool { return !ch.unserved })
		}
		if len(choices) == 0 {
			continue
		}
		ready := slices.DeleteFunc(slices.Clone(choices), func(ch loadChoice) bool { return !ch.fitsNow })
		if len(ready) == 0 {
			// The drain guard: wait for the streams in the way to end
			// rather than evict them; hold the slot against judge work,
			// which would only lengthen the wait.
			if c == classInference {
				s.reserved = true
			}
			continue
		}
		// With one slot every load is dead time (its warm-up holds the
		// slot), and with the VRAM unknown no load may go beside another
		// model: which goes first saves nothing there.
		dead := s.view.Slots > 1 && s.view.VRAMTotalGB > 0
		for x := range s.present {
			dead = dead && !s.busy(x)
		}
		slices.SortStableFunc(ready, func(a, b loadChoice) int {
			if a.evictsJudge != b.evictsJudge {
				if b.evictsJudge {
					return -1
				}
				return 1
			}
			if a.judgeLast != b.judgeLast {
				if b.judgeLast {
					return -1
				}
				return 1
			}
			if dead {
				// Nothing runs beside this load: it is dead time whatever
				// it loads. A model that fits beside nothing costs as much
				// wherever it loads, so it goes now; otherwise the
				// quickest load, which leaves the most room to load the
				// next model beside it while it runs.
				if la, lb := st.lonely(s, a.model), st.lonely(s, b.model); la != lb {
					if la {
						return -1
					}
					return 1
				}
				ta, tb := st.v.Models[a.model].LoadTime, st.v.Models[b.model].LoadTime
				if ta > 0 && tb > 0 && ta != tb {
					return cmp.Compare(ta, tb)
				}
			}
			if d := cmp.Compare(b.work, a.work); d != 0 {
				return d
			}
			// Unmeasured and equal: bigger models are the slower ones, so
			// they start first and leave the small ones for the tail.
			return cmp.Compare(st.v.Models[b.model].LoadTime, st.v.Models[a.model].LoadTime)
		})
		m := ready[0].model
		for s.free > 0 && st.take(c, m, s) {
		}
		s.present[m], s.loading = true, m
		s.usedGB += st.v.Models[m].SizeGB
		st.serving[m]++
	}
}

// lonely reports whether m, loaded on s, leaves room for no other model s
// offers: its load then runs with nothing beside it, wherever it happens.
// Unknown sizes or VRAM make no model lonely.
func (st *placeState) lonely(s *placeServer, m string) bool {
	size, total := st.v.Models[m].SizeGB, s.view.VRAMTotalGB
	if size <= 0 || total <= 0 {
		return false
	}
	for x, ok := range s.view.Offered {
		if !ok || x == m {
			continue
		}
		if sx := st.v.Models[x].SizeGB; sx <= 0 || size+sx <= total+1e-9 {
			return false
		}
	}
	return true
}

// unserved reports whether no up server holds m, or s has pinned jobs of
// m (class c), which no other server may run.
func (st *placeState) unserved(c jobClass, m string, s *placeServer) bool {
	if st.serving[m] == 0 {
		return true
	}
	pm := st.pinned[s.view.Name]
	return pm != nil && pm[c][m].left() > 0
}

// judgeLast reports whether m's inference should wait for the other
// models' loads: m is also a judge model, and the judging that follows
// inference needs it resident, so running its own tests last lets one
// load serve both (a, c, b then b judging: 3 loads, not a, b, c, b).
// Resident at the start, it runs first instead (resident first), and the
// judging loads it again: a load either way.
func (st *placeState) judgeLast(c jobClass, m string) bool {
	return c == classInference && st.v.JudgeModels[m]
}

// worthSpreading reports whether loading m on s, beside the servers that
// hold it already, would finish its queued work sooner: when those servers
// would stay busy with it longer than the load takes (times SpreadFactor).
func (st *placeState) worthSpreading(c jobClass, m string, s *placeServer) bool {
	return st.worthSpreadingJobs(m, s, float64(st.left(c, m, s)))
}

// worthSpreadingJobs is worthSpreading for left jobs of m.
func (st *placeState) worthSpreadingJobs(m string, s *placeServer, left float64) bool {
	k := st.serving[m]
	slots := float64(k * max(s.view.Slots, 1))
	jt := st.v.Models[m].JobTime.Seconds()
	load := st.v.Models[m].LoadTime.Seconds()
	if jt <= 0 || load <= 0 {
		per := st.p.SpreadJobsPerSlot
		if per <= 0 {
			per = 8
		}
		return left/slots > float64(per)
	}
	f := st.p.SpreadFactor
	if f <= 0 {
		f = 2
	}
	return left*jt/slots > f*load
}

// fit says whether m can be loaded on s now without evicting a model that
// is streaming or loading (fitsNow), once such models drain (fitsEver), and
// whether it takes evicting a judge model. Without a known VRAM size or
// model size, a JIT server is taken to hold one model at a time.
func (st *placeState) fit(s *placeServer, m string) (fitsNow, fitsEver, evictsJudge bool) {
	busy := s.busy
	size, total := st.v.Models[m].SizeGB, s.view.VRAMTotalGB
	if size <= 0 || total <= 0 {
		fitsNow = true
		for x := range s.present {
			fitsNow = fitsNow && !busy(x)
			evictsJudge = evictsJudge || st.v.JudgeModels[x]
		}
		return fitsNow, true, evictsJudge
	}
	if size > total {
		return false, false, false
	}
	need := s.usedGB + size - total
	if need <= 1e-9 {
		return true, true, false
	}
	if st.awaitsStep(s) {
		// The server makes room by evicting its least recently used idle
		// models, and to it a model between two steps of a loop is idle.
		return false, true, false
	}
	var idleGB, idleOtherGB float64
	unknownIdle := false
	for x := range s.present {
		sz := st.v.Models[x].SizeGB
		switch {
		case busy(x):
		case sz <= 0:
			unknownIdle = true
		default:
			idleGB += sz
			if !st.v.JudgeModels[x] {
				idleOtherGB += sz
			}
		}
	}
	fitsNow = unknownIdle || idleGB >= need-1e-9
	// Once the busy models drain they are idle and can go: anything no
	// larger than the VRAM fits in the end.
	return fitsNow, true, fitsNow && !unknownIdle && idleOtherGB < need-1e-9
}

// awaitsStep reports whether s holds a model that an agent loop's next step
// is expected on (ServerView.Expected). Its server takes that model for
// idle and may evict it to make room, so a load there waits until the step
// has arrived (and streams) unless it fits in the room that is free.
func (st *placeState) awaitsStep(s *placeServer) bool {
	for m, n := range s.view.Expected {
		if n > 0 && s.present[m] {
			return true
		}
	}
	return false
}
