package des

import (
	"fmt"
	"math"
	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
	"time"
)

// The event loop of Simulate. Time is a float64 of virtual seconds;
// between two events every rate is constant, so each step jumps straight to
// the next event: a load ending, a prefill ending, a reply ending.

const (
	epsTime   = 1e-9 // seconds: events this close are simultaneous
	epsTokens = 1e-6 // tokens: a reply this close to done is done
)

type jobState int

const (
	jobPending  jobState = iota // its cell's inference has not ended yet
	jobQueued                   // waiting for the policy
	jobAssigned                 // holding a slot, waiting for its model
	jobActive                   // prefilling or decoding
	jobDone
)

type desJob struct {
	Job
	id         int
	state      jobState
	ready      float64 // when it was queued
	start      float64 // when its request started (model resident)
	prefill    float64 // seconds of prefill left
	decoding   bool    // prefill over: counted in its server's decoding streams
	tokens     float64 // reply tokens left
	dependents []int   // judge jobs of its cell
}

type desRun struct {
	sc        *Scenario
	policy    placement.Policy
	pipelined bool
	t         float64
	jobs      []desJob
	servers   []*desServer
	byName    map[string]*desServer
	queue     []int // queued job ids in order; entries that left are dropped lazily
	left      int   // jobs not done
	infLeft   int   // inference jobs not done
	infEnd    float64
	loads     int
	dirty     bool // something the policy may act on changed

	view   placement.FleetView
	models map[string]placement.ModelView
	// upcoming counts the judge jobs not queued yet, per model (the
	// view's Upcoming); upcomingN is their sum.
	upcoming  map[string]int
	upcomingN int
	jtSum     map[string]float64
	jtN       map[string]int
}

var desEpoch = time.Unix(0, 0).UTC()

func newDESRun(sc Scenario, p placement.Policy, pipelined bool) *desRun {
	r := &desRun{
		sc: &sc, policy: p, pipelined: pipelined,
		byName: map[string]*desServer{}, models: map[string]placement.ModelView{},
		jtSum: map[string]float64{}, jtN: map[string]int{}, upcoming: map[string]int{},
	}
	judges := map[string]bool{}
	r.jobs = make([]desJob, len(sc.Jobs))
	for i, j := range sc.Jobs {
		r.jobs[i] = desJob{Job: j, id: i}
		if j.Purpose == chat.PurposeJudge {
			judges[j.Model] = true
			r.upcoming[j.Model]++
			r.upcomingN++
		} else {
			r.infLeft++
		}
	}
	for i, j := range sc.Jobs {
		if j.Purpose == chat.PurposeJudge {
			r.jobs[j.Judges].dependents = append(r.jobs[j.Judges].dependents, i)
		}
	}
	r.left = len(r.jobs)
	var meanGBps float64
	for _, cfg := range sc.Servers {
		s := &desServer{Server: cfg, offered: map[string]bool{}, resident: map[string]uint64{},
			running: map[string]int{}, draining: map[string]bool{}}
		for m := range sc.Models {
			if cfg.offers(m) {
				s.offered[m] = true
			}
		}
		if cfg.Static {
			for m := range s.offered {
				s.resident[m] = 0
			}
		}
		for _, m := range cfg.Preload {
			s.seq++
			s.resident[m] = s.seq
		}
		r.servers = append(r.servers, s)
		r.byName[cfg.Name] = s
		meanGBps += cfg.LoadGBps / float64(len(sc.Servers))
	}
	for name, m := range sc.Models {
		mv := placement.ModelView{SizeGB: m.SizeGB}
		if meanGBps > 0 && !sc.HideLoadTimes {
			mv.LoadTime = seconds(m.SizeGB / meanGBps)
		}
		r.models[name] = mv
	}
	r.view = placement.FleetView{Models: r.models, JudgeModels: judges, Upcoming: r.upcoming,
		Servers: make([]placement.ServerView, len(r.servers))}
	for i, s := range r.servers {
		r.view.Servers[i] = placement.ServerView{
			Name: s.Name, Up: true, Slots: s.Slots, Offered: s.offered, JIT: !s.Static,
			Resident: map[string]bool{}, Streaming: map[string]int{},
		}
	}
	return r
}

func (r *desRun) run() error {
	for i := range r.jobs {
		if r.jobs[i].Purpose != chat.PurposeJudge {
			r.enqueue(i)
		}
	}
	r.phaseCheck()
	// Each job causes a bounded number of events (assignment, load, prefill
	// end, end); far more steps than that means the loop is stuck.
	for steps, limit := 0, 16*len(r.jobs)+64; r.left > 0; steps++ {
		if steps > limit {
			return fmt.Errorf("no progress after %d events at t=%.1fs", steps, r.t)
		}
		if r.dirty {
			r.dirty = false
			if err := r.place(); err != nil {
				return err
			}
		}
		dt, ok := r.nextEvent()
		if !ok {
			return fmt.Errorf("policy left %d jobs queued on an idle fleet at t=%.1fs", r.queued(), r.t)
		}
		r.advance(dt)
		r.fire()
	}
	return nil
}

func (r *desRun) enqueue(i int) {
	if j := &r.jobs[i]; j.Purpose == chat.PurposeJudge {
		if r.upcoming[j.Model]--; r.upcoming[j.Model] == 0 {
			delete(r.upcoming, j.Model)
		}
		r.upcomingN--
	}
	r.jobs[i].state = jobQueued
	r.jobs[i].ready = r.t
	r.queue = append(r.queue, i)
	r.dirty = true
}

// phaseCheck starts the judge phase of a two-phase run once inference is over.
func (r *desRun) phaseCheck() {
	if r.infLeft > 0 || r.view.Phase1Done {
		return
	}
	r.view.Phase1Done = true
	if r.pipelined {
		return
	}
	for i := range r.jobs {
		if r.jobs[i].Purpose == chat.PurposeJudge && r.jobs[i].state == jobPending {
			r.enqueue(i)
		}
	}
}

func (r *desRun) queued() int {
	n := 0
	for _, i := range r.queue {
		if r.jobs[i].state == jobQueued {
			n++
		}
	}
	return n
}

// place shows the policy the fleet and carries out its assignments.
func (r *desRun) place() error {
	free := 0
	for _, s := range r.servers {
		free += s.Slots - s.held()
	}
	if free == 0 {
		return nil // a slot freeing up sets dirty again
	}
	q := r.queue[:0]
	jobs := r.view.Queue[:0]
	for _, i := range r.queue {
		j := &r.jobs[i]
		if j.state != jobQueued {
			continue
		}
		q = append(q, i)
		jobs = append(jobs, placement.JobView{ID: uint64(i), Model: j.Model, Purpose: j.Purpose, Pinned: j.Pinned,
			Enqueued: desEpoch.Add(seconds(j.ready))})
	}
	r.queue, r.view.Queue = q, jobs
	if len(q) == 0 && r.upcomingN == 0 {
		return nil
	}
	for i, s := range r.servers {
		r.fillView(&r.view.Servers[i], s)
	}
	r.view.Now = desEpoch.Add(seconds(r.t))
	as := r.policy.Place(r.view)
	// Jobs first: a load with no job must not evict a model that a job of
	// the same decision is about to take.
	for _, loads := range []bool{false, true} {
		for _, a := range as {
			if (a.Load != "") != loads {
				continue
			}
			if err := r.assign(a); err != nil {
				return fmt.Errorf("t=%.1fs: invalid assignment of job %d (load %q) to %q: %w", r.t, a.Job, a.Load, a.Server, err)
			}
		}
	}
	return nil
}

// fillView shows s as a live fleet would: slots held per model (waiting
// for a load included), resident models, the load in flight, and VRAM
// unless the scenario hides it.
func (r *desRun) fillView(sv *placement.ServerView, s *desServer) {
	sv.Busy = s.held()
	clear(sv.Resident)
	clear(sv.Streaming)
	var used float64
	for m := range s.resident {
		sv.Resident[m] = true
		used += r.sc.Models[m].SizeGB
	}
	for _, id := range s.waiting {
		sv.Streaming[r.jobs[id].Model]++
	}
	for _, id := range s.active {
		sv.Streaming[r.jobs[id].Model]++
	}
	if s.prefetching {
		// The warm-up request of a load with no job holds a slot for its
		// model, as the fleet shows it.
		sv.Streaming[s.loading]++
	}
	sv.Loading = s.loading
	if s.loading != "" {
		used += r.sc.Models[s.loading].SizeGB
	}
	if !s.Static && !r.sc.HideVRAM {
		sv.VRAMTotalGB, sv.VRAMUsedGB = s.VRAMGB, used
	}
}

func (r *desRun) assign(a placement.Assignment) error {
	s := r.byName[a.Server]
	if a.Load != "" {
		return r.prefetch(s, a.Load)
	}
	if a.Job >= uint64(len(r.jobs)) {
		return fmt.Errorf("no such job")
	}
	j := &r.jobs[a.Job]
	switch {
	case s == nil:
		return fmt.Errorf("no such server")
	case j.state != jobQueued:
		return fmt.Errorf("job is not queued")
	case s.held() >= s.Slots:
		return fmt.Errorf("no free slot")
	case !s.offered[j.Model]:
		return fmt.Errorf("server does not offer %s", j.Model)
	case j.Pinned != "" && j.Pinned != s.Name:
		return fmt.Errorf("job is pinned to %s", j.Pinned)
	}
	j.state = jobAssigned
	s.waiting = append(s.waiting, j.id)
	r.kick(s)
	return nil
}

// prefetch starts loading m on s with no job, holding a free slot until
// the load ends, as the fleet's warm-up request does.
func (r *desRun) prefetch(s *desServer, m string) error {
	_, resident := s.resident[m]
	switch {
	case s == nil:
		return fmt.Errorf("no such server")
	case s.Static:
		return fmt.Errorf("load of %s on a server that does not load models", m)
	case !s.offered[m]:
		return fmt.Errorf("server does not offer %s", m)
	case s.held() >= s.Slots:
		return fmt.Errorf("no free slot for a load of %s", m)
	case s.loading != "":
		return fmt.Errorf("load of %s while %s loads", m, s.loading)
	case resident:
		return fmt.Errorf("load of %s, which is resident", m)
	}
	victims, now := r.plan(s, m)
	if !now {
		return fmt.Errorf("load of %s would evict a model in use", m)
	}
	r.startLoad(s, m, victims)
	s.prefetching = true
	return nil
}

// nextEvent is the time to the next event; false when nothing is under way.
func (r *desRun) nextEvent() (float64, bool) {
	dt, ok := math.Inf(1), false
	for _, s := range r.servers {
		if s.loading != "" {
			dt, ok = min(dt, s.loadEnd-r.t), true
		}
		for _, id := range s.active {
			j := &r.jobs[id]
			if !j.decoding {
				dt = min(dt, j.prefill)
			} else {
				dt = min(dt, j.tokens/r.rate(s, j))
			}
			ok = true
		}
	}
	return max(dt, 0), ok
}

// advance moves the clock by dt, progressing every request and booking
// each server's time.
func (r *desRun) advance(dt float64) {
	for _, s := range r.servers {
		switch {
		case len(s.active) > 0:
			s.busy += dt
			if s.decoding == s.Slots {
				s.full += dt
			}
		case s.loading != "":
			s.loadIdle += dt
		default:
			s.idle += dt
		}
		for _, id := range s.active {
			j := &r.jobs[id]
			if !j.decoding {
				j.prefill -= dt
			} else {
				j.tokens -= r.rate(s, j) * dt
			}
		}
	}
	r.t += dt
}

// fire handles every event due now: loads that end, prefills that end,
// replies that end.
func (r *desRun) fire() {
	for _, s := range r.servers {
		changed := false
		if s.loading != "" && s.loadEnd-r.t <= epsTime {
			s.seq++
			s.resident[s.loading] = s.seq
			s.loads = append(s.loads, s.loadRec)
			s.loading, s.prefetching = "", false
			changed = true
		}
		// Rates change only once every prefill that ends now has become a
		// decoding stream.
		for _, id := range s.active {
			if j := &r.jobs[id]; !j.decoding && j.prefill <= epsTime {
				r.beginDecode(s, j)
			}
		}
		keep := s.active[:0]
		for _, id := range s.active {
			j := &r.jobs[id]
			if j.decoding && j.tokens <= epsTokens {
				r.finish(s, j)
				changed = true
				continue
			}
			keep = append(keep, id)
		}
		s.active = keep
		if changed {
			r.kick(s)
			r.dirty = true
		}
	}
}

func (r *desRun) finish(s *desServer, j *desJob) {
	j.state = jobDone
	s.decoding--
	s.running[j.Model]--
	s.jobs++
	r.left--
	if !r.sc.HideJobTimes {
		r.jtSum[j.Model] += r.t - j.start
		r.jtN[j.Model]++
		mv := r.models[j.Model]
		mv.JobTime = seconds(r.jtSum[j.Model] / float64(r.jtN[j.Model]))
		r.models[j.Model] = mv
	}
	if j.Purpose == chat.PurposeJudge {
		return
	}
	r.infLeft--
	r.infEnd = r.t
	if r.pipelined {
		for _, d := range j.dependents {
			r.enqueue(d)
		}
	}
	r.phaseCheck()
}

func (r *desRun) result() Result {
	res := Result{Makespan: seconds(r.t), InferenceEnd: seconds(r.infEnd), Loads: r.loads}
	var busy float64
	for _, s := range r.servers {
		busy += s.busy
		res.Servers = append(res.Servers, ServerTrace{
			Name: s.Name, Jobs: s.jobs, Busy: seconds(s.busy), Full: seconds(s.full),
			LoadIdle: seconds(s.loadIdle), Idle: seconds(s.idle), Loads: s.loads,
		})
	}
	if r.t > 0 {
		res.IdleShare = 1 - busy/(r.t*float64(len(r.servers)))
	}
	return res
}
