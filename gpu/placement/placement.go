package placement

import (
	"cmp"
	"slices"

	"pitwall/gpu/chat"
)

// Placer is pitwall's placement policy. It keeps every GPU busy and models
// resident:
//
//   - a free slot takes work of a model already resident (or loading) there;
//   - a server whose models are about to run out of work loads its next
//     model beside them, so that the load overlaps their last jobs;
//   - a model is never loaded where that would evict a model that is
//     streaming (the drain guard);
//   - a server loads a model only when nothing resident has work left for
//     it, and then picks the load that leaves the least idle time: a model
//     no server holds before a second copy of one, one that fits beside
//     what is streaming before one that must wait for a drain; with
//     nothing running beside the load, a model that fits beside nothing,
//     else the quickest load; otherwise the most remaining work first;
//   - a model with much work left is loaded on one more server when that
//     server has nothing better to do and the work would outlast the load;
//   - judge jobs take only slots that no inference job can use, and judge
//     models stay resident while judge work is queued for them.
//
// It is a pure function of the FleetView: no clock, no randomness, and every
// map is read in sorted order, so the same view always gives the same
// placements and a discrete-event simulation can drive it in virtual time.
type Placer struct {
	// SpreadFactor: a model that some servers already hold is loaded on one
	// more only when its queued work would keep those servers busy longer
	// than SpreadFactor times its load time. Zero means 2.
	SpreadFactor float64
	// SpreadJobsPerSlot replaces that test while a model's job time or load
	// time is unknown: spread when more queued jobs than this remain per
	// slot that holds the model. Zero means 8.
	SpreadJobsPerSlot int
	// PrefetchFactor: a server starts loading its next model beside the
	// ones it runs once their queued work on it would last less than
	// PrefetchFactor times that load. Zero means 1.
	PrefetchFactor float64
}

// Default is pitwall's placement policy with its default tunables.
var Default Policy = Placer{}

// jobClass orders work: inference is placed first, judging takes what is left.
type jobClass int

const (
	classInference jobClass = iota
	classJudge
	numClasses
)

func classOf(p chat.Purpose) jobClass {
	if p == chat.PurposeJudge {
		return classJudge
	}
	return classInference
}

// Place implements Policy.
func (p Placer) Place(v FleetView) []Assignment {
	st := newPlaceState(p, &v)
	if !st.work() {
		return nil
	}
	for c := range numClasses {
		st.fill(c)
		st.load(c)
	}
	// A slot still free has no queued work it could take: it may load a
	// model of the judging to come.
	for _, s := range st.servers {
		st.prefetchUpcoming(s, 0)
	}
	out := st.out
	st.out = nil // the caller's
	return out
}

// placeState is one decision's working copy of the view: what is still free,
// queued and held once the assignments made so far are counted.
type placeState struct {
	p       Placer
	v       *FleetView
	servers []*placeServer // up servers, by name
	// pool holds, per class and model, the unpinned queued jobs in order;
	// pinned holds the pinned ones per server.
	pool    [numClasses]map[string]*jobList
	pinned  map[string]*[numClasses]map[string]*jobList
	serving map[string]int // model -> up servers holding or loading it
	// knownJobTime is the longest job time any model of a class has shown;
	// it stands in for models not yet measured when work is compared.
	knownJobTime [numClasses]float64
	out          []Assignment
	totalFree    int        // free slots on up servers
	lists        []*jobList // every list of this decision, in the order made
	last         *jobList   // the list of the job found last (listOf)
	lastKey      QueueKey
	scanned      int // queued jobs the lists have read in this decision (more)
}

// work reports whether the decision has anything to decide: a free slot,
// and queued or upcoming work.
func (st *placeState) work() bool {
	if st.totalFree == 0 {
		return false
	}
	if len(st.v.Queue) > 0 {
		return true
	}
	for _, n := range st.v.Upcoming {
		if n > 0 {
			return true
		}
	}
	return false
}

// busy reports whether model x streams on s, or is being loaded there, once
// this decision is applied: in flight now, loading, given a job in it, or
// awaiting the next step of an agent loop (ServerView.Expected).
func (s *placeServer) busy(x string) bool {
	return s.view.Streaming[x] > 0 || s.placed[x] > 0 || x == s.loading || s.view.Expected[x] > 0
}

// placeServer is one up server during a decision.
type placeServer struct {
	view    *ServerView
	free    int
	present map[string]bool // resident, loading, or always there (not JIT)
	loading string          // the model whose load is in flight or decided now
	// placed counts the jobs given to the server in this decision, by
	// model: they stream from the moment the decision is applied, so the
	// drain guard treats them as streaming now.
	placed map[string]int
	usedGB float64
	// reserved: inference waits here for a drain, so judge work keeps off.
	reserved bool
}

// newPlaceState is the working state of a decision on v. Unless work says
// there is something to decide, it holds the servers alone.
func newPlaceState(p Placer, v *FleetView) *placeState {
	st := &placeState{p: p, v: v, serving: map[string]int{}, pinned: map[string]*[numClasses]map[string]*jobList{}}
	for c := range numClasses {
		st.pool[c] = map[string]*jobList{}
	}
	for i := range v.Servers {
		sv := &v.Servers[i]
		if !sv.Up {
			continue
		}
		ps := &placeServer{view: sv, free: max(sv.Free(), 0), present: map[string]bool{}, placed: map[string]int{}, loading: sv.Loading}
		for m, ok := range sv.Resident {
			if ok {
				ps.present[m] = true
			}
		}
		if sv.Loading != "" {
			ps.present[sv.Loading] = true
		}
		if !sv.JIT {
			for m, ok := range sv.Offered {
				if ok {
					ps.present[m] = true
				}
			}
		}
		for m := range ps.present {
			st.serving[m]++
			ps.usedGB += v.Models[m].SizeGB
		}
		ps.usedGB = max(ps.usedGB, sv.VRAMUsedGB)
		st.totalFree += ps.free
		st.servers = append(st.servers, ps)
	}
	if !st.work() {
		return st
	}
	slices.SortFunc(st.servers, func(a, b *placeServer) int { return cmp.Compare(a.view.Name, b.view.Name) })
	if v.Counts != nil {
		// The queue's counts are given (FleetView.Counts): each list starts
		// with its count, and the queue is read only as jobs are taken
		// (more), so that a decision reads the first jobs of the models it
		// places, not a queue of thousands.
		for k, n := range v.Counts {
			if k.Pinned != "" && !st.up(k.Pinned) {
				continue
			}
			l := st.list(classOf(k.Purpose), k.Model, k.Pinned)
			if l.count == 0 || n.First < l.read { // its first key, or one queued earlier
				l.read = n.First
			}
			l.count += n.Weight
			l.want += n.Jobs
		}
		for _, l := range st.lists {
			l.want = min(l.want, st.totalFree)
		}
	} else {
		for i := range v.Queue {
			if l := st.listOf(&v.Queue[i]); l != nil {
				l.add(i, v.Queue[i].weight(), st.totalFree)
			}
		}
		for _, l := range st.lists {
			l.read = len(v.Queue)
		}
	}
	for m, mv := range v.Models {
		if mv.JobTime <= 0 {
			continue
		}
		for c := range numClasses {
			if st.pool[c][m] != nil || c == classJudge && v.JudgeModels[m] {
				st.knownJobTime[c] = max(st.knownJobTime[c], mv.JobTime.Seconds())
			}
		}
	}
	return st
}

// left is how many jobs of class c and model m server s could take, by
// weight, with the agent steps expected back on it (ServerView.Expected).
func (st *placeState) left(c jobClass, m string, s *placeServer) int {
	n := st.pool[c][m].left()
	if pm := st.pinned[s.view.Name]; pm != nil {
		n += pm[c][m].left()
	}
	if c == classInference {
		n += s.view.Expected[m]
	}
	return n
}

// take hands server s one job of class c and model m, pinned ones first
// because no other server may run them.
func (st *placeState) take(c jobClass, m string, s *placeServer) bool {
	i, ok := 0, false
	if pm := st.pinned[s.view.Name]; pm != nil {
		i, ok = st.takeFrom(pm[c][m])
	}
	if !ok {
		i, ok = st.takeFrom(st.pool[c][m])
	}
	if !ok {
		return false
	}
	st.out = append(st.out, Assignment{Job: st.v.Queue[i].ID, Server: s.view.Name})
	s.free--
	s.placed[m]++
	return true
}

// models lists the models with queued work of class c that s could run, sorted.
func (st *placeState) models(c jobClass, s *placeServer) []string {
	var out []string
	for m, l := range st.pool[c] {
		if l.left() > 0 && s.view.Offered[m] {
			out = append(out, m)
		}
	}
	if pm := st.pinned[s.view.Name]; pm != nil {
		for m, l := range pm[c] {
			if l.left() > 0 && s.view.Offered[m] {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jobTime is the typical slot time of one job of m in seconds; a model not
// yet measured counts as the slowest one measured, or 1 s when none is.
func (st *placeState) jobTime(c jobClass, m string) float64 {
	if t := st.v.Models[m].JobTime.Seconds(); t > 0 {
		return t
	}
	if st.knownJobTime[c] > 0 {
		return st.knownJobTime[c]
	}
	return 1
}

// sharing is what fill's tie-break reads of the other servers, taken once
// as the pass starts (a heuristic over the decision's starting state, so
// that a pass costs the servers' models once, not once for every server):
// for each model, how many servers have it as their only work of the
// class, and the slots of the servers that hold it.
type sharing struct {
	soleOf map[string]int
	slots  map[string]int
}

func (st *placeState) sharing(c jobClass) sharing {
	sh := sharing{soleOf: map[string]int{}, slots: map[string]int{}}
	for _, o := range st.servers {
		if c == classJudge && o.reserved {
			continue // it keeps judge work off its slots: it takes none of m's
		}
		only, n := "", 0
		for m := range o.present { // counted, so the order is of no matter
			sh.slots[m] += o.view.Slots
			if o.view.Offered[m] && st.left(c, m, o) > 0 {
				only, n = m, n+1
			}
		}
		if n == 1 {
			sh.soleOf[only]++
		}
	}
	return sh
}

// othersTime is how long the other servers holding m would take over its
// queued work without s, per slot: the shared queue's, not the jobs pinned
// to s or the steps s's own agent loops have left, which no other server
// can run.
func (st *placeState) othersTime(c jobClass, m string, s *placeServer, sh sharing) float64 {
	slots := sh.slots[m] - s.view.Slots
	return float64(st.pool[c][m].left()) * st.jobTime(c, m) / float64(max(slots, 1))
}

// fill gives each free slot work of a model already present on its server:
// resident models before one still loading, then the model with the least
// queued work per server that holds it. The order changes none of the
// server's work, but finishing the model that is running out first frees
// its room sooner: a model loaded beside it (prefetch) would otherwise take
// the slots and leave its last jobs behind, holding the VRAM that the next
// load needs to go beside the new model's streams. Except for a model that
// is another server's only work (sharing): that one goes after the
// others, since the other server can run nothing else, and between two
// such models the one whose other servers would take longer over it goes
// first (othersTime). Without that, the end of inference drains the model
// one server depends on and leaves that server idle while the rest finish.
func (st *placeState) fill(c jobClass) {
	var sh sharing // read once, by the first server that has a choice
	for _, s := range st.servers {
		if s.free == 0 || (c == classJudge && s.reserved) {
			continue
		}
		var ms []string
		for _, m := range st.models(c, s) {
			if s.present[m] {
				ms = append(ms, m)
			}
		}
		perServer := func(m string) float64 {
			return float64(st.left(c, m, s)) * st.jobTime(c, m) / float64(max(st.serving[m], 1))
		}
		if len(ms) > 1 && sh.soleOf == nil {
			sh = st.sharing(c)
		}
		// s has two models with work or more (else nothing is sorted), so
		// each server that has m as its only work is another one.
		leave := func(m string) bool { return sh.soleOf[m] > 0 }
		slices.SortStableFunc(ms, func(a, b string) int {
			// A job of a model still loading would hold its slot idle
			// until the load ends; a resident model's job runs now.
			if (a == s.loading) != (b == s.loading) {
				if b == s.loading {
					return -1
				}
				return 1
			}
			// A model that is another server's only work goes after the
			// others: that server can run nothing else, this one can.
			if la, lb := leave(a), leave(b); la != lb {
				if lb {
					return -1
				}
				return 1
			} else if la {
				// Both are: help the servers that would take longest
				// without this one.
				return cmp.Compare(st.othersTime(c, b, s, sh), st.othersTime(c, a, s, sh))
			}
			return cmp.Compare(perServer(a), perServer(b))
		})
		st.prefetch(c, s, ms)
		for _, m := range ms {
			for s.free > 0 && st.take(c, m, s) {
			}
		}
	}
}
