package des

import (
	"cmp"
	"slices"
)

// One simulated server: its residency, loads, evictions and requests.

// desServer is one simulated server.
type desServer struct {
	Server
	offered  map[string]bool
	resident map[string]uint64 // model -> order of last use, for LRU eviction
	seq      uint64
	loading  string
	loadEnd  float64
	loadRec  LoadRecord
	// prefetching: the load in flight has no job (placement.Assignment.Load)
	// and holds a slot of its own until it ends.
	prefetching bool
	draining    map[string]bool // models a blocked load waits to evict
	waiting     []int           // assigned jobs whose model is not resident yet
	active      []int           // jobs prefilling or decoding
	decoding    int
	running     map[string]int // model -> active jobs
	// accounting, in virtual seconds
	busy, full, loadIdle, idle float64
	jobs                       int
	loads                      []LoadRecord
}

func (s *desServer) held() int {
	n := len(s.waiting) + len(s.active)
	if s.prefetching {
		n++
	}
	return n
}

// kick starts what can start on s: every waiting job whose model is
// resident and not being drained, and the next load its waiting jobs need.
// Jobs start before the load is planned: a model that just loaded for them
// must not look idle and be evicted again before they run.
func (r *desRun) kick(s *desServer) {
	r.startReady(s)
	if s.loading != "" {
		return
	}
	clear(s.draining)
	for _, id := range s.waiting {
		m := r.jobs[id].Model
		if _, ok := s.resident[m]; ok {
			continue
		}
		victims, now := r.plan(s, m)
		if now {
			r.startLoad(s, m, victims)
		} else {
			// As the simulator does: no new request may take a model
			// that a load waits to evict, or the load could wait for ever.
			for _, v := range victims {
				s.draining[v] = true
			}
		}
		break
	}
	r.startReady(s)
}

func (r *desRun) startReady(s *desServer) {
	keep := s.waiting[:0]
	for _, id := range s.waiting {
		m := r.jobs[id].Model
		if _, ok := s.resident[m]; ok && !s.draining[m] {
			r.startJob(s, id)
		} else {
			keep = append(keep, id)
		}
	}
	s.waiting = keep
}

// plan picks the models to evict for m, idle ones first, least recently
// used first; now says they are all idle and enough.
func (r *desRun) plan(s *desServer, m string) (victims []string, now bool) {
	used := 0.0
	for x := range s.resident {
		used += r.sc.Models[x].SizeGB
	}
	need := used + r.sc.Models[m].SizeGB - s.VRAMGB
	if need <= 1e-9 {
		return nil, true
	}
	cands := make([]string, 0, len(s.resident))
	for x := range s.resident {
		cands = append(cands, x)
	}
	slices.SortFunc(cands, func(a, b string) int {
		if ia, ib := s.running[a] == 0, s.running[b] == 0; ia != ib {
			if ia {
				return -1
			}
			return 1
		}
		return cmp.Compare(s.resident[a], s.resident[b])
	})
	freed, idle := 0.0, true
	for _, x := range cands {
		victims = append(victims, x)
		idle = idle && s.running[x] == 0
		if freed += r.sc.Models[x].SizeGB; freed >= need-1e-9 {
			return victims, idle
		}
	}
	return victims, false
}

func (r *desRun) startLoad(s *desServer, m string, victims []string) {
	for _, v := range victims {
		delete(s.resident, v)
	}
	s.loading = m
	s.loadEnd = r.t + r.sc.loadTime(s.Server, m)
	s.loadRec = LoadRecord{Model: m, Start: seconds(r.t), End: seconds(s.loadEnd), Evicted: victims}
	r.loads++
}

func (r *desRun) startJob(s *desServer, id int) {
	j := &r.jobs[id]
	j.state = jobActive
	j.start = r.t
	j.prefill = r.sc.prefill(j.Job)
	j.tokens = float64(j.ReplyTokens)
	s.active = append(s.active, id)
	s.running[j.Model]++
	s.seq++
	s.resident[j.Model] = s.seq
	if j.prefill <= epsTime {
		r.beginDecode(s, j)
	}
}

func (r *desRun) beginDecode(s *desServer, j *desJob) {
	j.prefill, j.decoding = 0, true
	s.decoding++
}

// rate is j's decode rate on s now.
func (r *desRun) rate(s *desServer, j *desJob) float64 {
	return r.sc.Rate(r.sc.Models[j.Model].TokensPerSec, max(s.decoding, 1))
}
