package placement

import (
	"cmp"
	"slices"
)

// jobList is queued jobs of one model, in queue order, consumed from next.
// It keeps the first few jobs only: one decision never takes more jobs than
// there are free slots, so a long queue costs a count, not a copy. Given
// the queue's counts, it keeps none at first and reads them as they are
// taken (more). Its work is counted in jobs by weight (JobView.Weight), so
// that an agent loop's step counts as the steps its loop has left.
type jobList struct {
	kept  []keptJob
	count int // the weight of every job in the list
	next  int // jobs taken, from kept
	taken int // their weight
	want  int // with FleetView.Counts: the jobs it may keep (as many as free slots)
	read  int // where its reading of the queue goes on (more)
}

// keptJob is a queued job's index in the view and its weight.
type keptJob struct{ i, w int }

func (l *jobList) add(i, w, keep int) {
	if len(l.kept) < keep {
		l.kept = append(l.kept, keptJob{i, w})
	}
	l.count += w
}

// left is the work left in the list, in jobs by weight.
func (l *jobList) left() int {
	if l == nil {
		return 0
	}
	return l.count - l.taken
}

func (l *jobList) take() (int, bool) {
	if l == nil || l.next >= len(l.kept) {
		return 0, false
	}
	k := l.kept[l.next]
	l.next++
	l.taken += k.w
	return k.i, true
}

// list is the list of class c, model m and server pinned ("" for the
// shared pool), made empty if there is none yet.
func (st *placeState) list(c jobClass, m, pinned string) *jobList {
	pool := st.pool[c]
	if pinned != "" {
		pm := st.pinned[pinned]
		if pm == nil {
			pm = &[numClasses]map[string]*jobList{{}, {}}
			st.pinned[pinned] = pm
		}
		pool = pm[c]
	}
	l := pool[m]
	if l == nil {
		l = &jobList{}
		st.lists = append(st.lists, l)
		pool[m] = l
	}
	return l
}

// up says whether the server named is up (st.servers is sorted by name).
func (st *placeState) up(name string) bool {
	_, found := slices.BinarySearchFunc(st.servers, name, func(s *placeServer, n string) int { return cmp.Compare(s.view.Name, n) })
	return found
}

// listOf is the list queued job j goes in, or nil when j waits for a
// server that is down. Queues often hold runs of one model: the list of
// the job before is tried first.
func (st *placeState) listOf(j *JobView) *jobList {
	if k := KeyOf(j); st.last == nil || k != st.lastKey {
		if j.Pinned != "" && !st.up(j.Pinned) {
			return nil // its server is down or unknown: it waits
		}
		st.last, st.lastKey = st.list(classOf(j.Purpose), j.Model, j.Pinned), k
	}
	return st.last
}

// more reads the queue on from where l's reading was left until l holds
// one more job than it did, or the queue ends (and says which). Each list
// reads from its first job on (FleetView.Counts), so that a decision reads
// little more than the jobs it places. Once the lists of a decision have
// read more than the whole queue between them (lists whose next jobs are
// far off), the rest is read once for all of them (readAll): a decision
// never reads more than twice the queue.
func (st *placeState) more(l *jobList) bool {
	n := len(l.kept)
	if n >= l.want {
		return false
	}
	if st.scanned > len(st.v.Queue) {
		st.readAll()
		return len(l.kept) > n
	}
	for l.read < len(st.v.Queue) {
		j := &st.v.Queue[l.read]
		l.read++
		st.scanned++
		if st.listOf(j) == l {
			l.kept = append(l.kept, keptJob{l.read - 1, j.weight()})
			return true
		}
	}
	return false
}

// readAll reads the queue once for every list, each from where its own
// reading was left (what a list keeps is its jobs up to there, in order).
func (st *placeState) readAll() {
	q := st.v.Queue
	for i := range q {
		if l := st.listOf(&q[i]); l != nil && i >= l.read && len(l.kept) < l.want {
			l.kept = append(l.kept, keptJob{i, q[i].weight()})
		}
	}
	for _, l := range st.lists {
		l.read = len(q)
	}
}

// takeFrom takes l's next job, reading more of the queue for it if need be.
func (st *placeState) takeFrom(l *jobList) (int, bool) {
	if l == nil || l.left() <= 0 {
		return 0, false
	}
	if l.next >= len(l.kept) && !st.more(l) {
		return 0, false
	}
	return l.take()
}
