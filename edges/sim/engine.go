package sim

import (
	"cmp"
	"context"
	"pitwall/gpu/simspec"
	"slices"
	"time"
)

// residency is where a model stands in VRAM.
type residency int

const (
	notLoaded residency = iota
	loading
	loaded
)

func (r residency) String() string {
	switch r {
	case loading:
		return "loading"
	case loaded:
		return "loaded"
	}
	return "not-loaded"
}

// modelRun is one offered model's life in one generation of the server.
type modelRun struct {
	ms       simspec.Model
	res      residency
	lru      uint64    // order of last use, for eviction
	lastUsed time.Time // wall time of last use, for Ollama's keep-alive
	active   int       // requests holding it (past the slot queue, until done)
	decoding int       // of those, the ones streaming tokens
	waiting  int       // requests for it in the slot queue
	drain    int       // loaders waiting to evict it: no new request may take it
}

// slotWaiter is one request in the slot queue.
type slotWaiter struct {
	ch      chan struct{}
	model   *modelRun
	granted bool
}

// engine is the GPU side of one generation: slots, the queue, model
// residency in VRAM and the decoding streams. Every field is guarded by
// the server's mutex.
type engine struct {
	s        *Server
	models   map[string]*modelRun
	busy     int // slots held
	queue    []*slotWaiter
	decoding int // streams decoding now, over every model
	seq      uint64
	kvTokens int // tokens held in KV cache by requests in flight (vLLM's cache usage)
	inFlight int // chat requests being handled
}

func newEngine(s *Server) *engine {
	e := &engine{s: s, models: make(map[string]*modelRun, len(s.cfg.Models))}
	now := time.Now()
	for _, name := range s.cfg.Models {
		m := &modelRun{ms: s.specs[name], lastUsed: now}
		if !jit(s.cfg.Spec) {
			m.res = loaded
		}
		e.models[name] = m
	}
	for _, name := range s.cfg.Spec.Preload {
		m := e.models[name]
		m.res = loaded
		e.touch(m, now)
	}
	return e
}

func (e *engine) touch(m *modelRun, now time.Time) {
	e.seq++
	m.lru = e.seq
	m.lastUsed = now
}

// enter and leave count a chat request in flight, from its arrival to its
// last byte, whatever befalls it.
func (e *engine) enter() {
	e.s.mu.Lock()
	e.inFlight++
	e.s.notifyLocked()
	e.s.mu.Unlock()
}

func (e *engine) leave() {
	e.s.mu.Lock()
	e.inFlight--
	e.s.notifyLocked()
	e.s.mu.Unlock()
}

// acquireSlot waits for one of the server's slots, first come first served.
func (e *engine) acquireSlot(ctx context.Context, m *modelRun) error {
	s := e.s
	s.mu.Lock()
	if e.busy < s.cfg.Slots && len(e.queue) == 0 {
		e.busy++
		s.counters.maxBusy = max(s.counters.maxBusy, e.busy)
		s.notifyLocked()
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{ch: make(chan struct{}), model: m}
	e.queue = append(e.queue, w)
	m.waiting++
	s.notifyLocked()
	s.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		if w.granted {
			s.mu.Unlock()
			e.releaseSlot()
			return ctx.Err()
		}
		if i := slices.Index(e.queue, w); i >= 0 {
			e.queue = slices.Delete(e.queue, i, i+1)
		}
		m.waiting--
		s.notifyLocked()
		s.mu.Unlock()
		return ctx.Err()
	}
}

// releaseSlot hands the slot to the first in the queue, or frees it.
func (e *engine) releaseSlot() {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(e.queue) > 0 {
		w := e.queue[0]
		e.queue = e.queue[1:]
		w.granted = true
		w.model.waiting--
		close(w.ch)
	} else {
		e.busy--
	}
	s.notifyLocked()
}

// acquireModel makes m resident and holds it for one request.
//
// A model being loaded blocks its requests until it is loaded. A model that
// does not fit evicts the least recently used idle models; when that is not
// enough it never evicts a model that is streaming: it marks the models it
// needs gone as draining (no new request may take them) and waits for them
// to finish. LM Studio and llama.cpp's router behave roughly so; without the
// drain mark, a steady stream of requests for the resident model would
// starve the load for ever.
//
// The load is done by the requesting goroutine; if its request goes away
// mid-load, the load is abandoned and the model stays unloaded.
func (e *engine) acquireModel(ctx context.Context, m *modelRun) error {
	s := e.s
	var mine []*modelRun // models this request marked draining
	undrain := func() {
		for _, v := range mine {
			v.drain--
		}
		mine = mine[:0]
	}
	s.mu.Lock()
	for {
		e.expireIdleLocked(time.Now())
		switch m.res {
		case loaded:
			if m.drain == 0 {
				undrain()
				m.active++
				e.touch(m, time.Now())
				s.notifyLocked()
				s.mu.Unlock()
				return nil
			}
		case notLoaded:
			undrain()
			victims, now := e.planLocked(m)
			if now {
				if err := e.loadLocked(ctx, m, victims); err != nil {
					s.mu.Unlock()
					return err
				}
				continue
			}
			for _, v := range victims {
				v.drain++
			}
			mine = append(mine, victims...)
			if len(victims) > 0 {
				s.notifyLocked()
			}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			undrain()
			s.notifyLocked()
			s.mu.Unlock()
			return ctx.Err()
		}
		s.mu.Lock()
	}
}

// loadLocked evicts victims and loads m, releasing the lock for the load's
// duration; it returns with the lock held.
func (e *engine) loadLocked(ctx context.Context, m *modelRun, victims []*modelRun) error {
	s := e.s
	for _, v := range victims {
		v.res = notLoaded
		s.counters.evictions++
		s.log.Debug("evicted", "model", v.ms.Name, "for", m.ms.Name)
	}
	m.res = loading
	s.notifyLocked()
	s.mu.Unlock()
	err := s.clock.sleep(ctx, loadTime(m.ms, s.cfg.Spec))
	s.mu.Lock()
	if err != nil {
		m.res = notLoaded
		s.notifyLocked()
		return err
	}
	m.res = loaded
	e.touch(m, time.Now())
	s.counters.loads[m.ms.Name]++
	s.notifyLocked()
	s.log.Debug("loaded", "model", m.ms.Name)
	return nil
}

// loadTime is how long a model takes to load: its size over the server's
// load bandwidth.
func loadTime(m simspec.Model, sp simspec.Server) time.Duration {
	return seconds(m.SizeGB / sp.LoadGBps)
}

// planLocked decides how to make room for m. With now, the victims are idle
// and evicting them makes room: load at once. Without, the victims (the
// least recently used first, idle before busy) must drain first; none means
// the room is held by loads in flight.
func (e *engine) planLocked(m *modelRun) (victims []*modelRun, now bool) {
	need := m.ms.SizeGB - (vramGB(e.s.cfg.Spec) - e.usedGBLocked())
	if need <= 1e-9 {
		return nil, true
	}
	var cands []*modelRun
	for _, v := range e.models {
		if v != m && v.res == loaded {
			cands = append(cands, v)
		}
	}
	slices.SortFunc(cands, func(a, b *modelRun) int {
		if (a.active == 0) != (b.active == 0) {
			if a.active == 0 {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.lru, b.lru)
	})
	var freed float64
	allIdle := true
	for _, v := range cands {
		victims = append(victims, v)
		allIdle = allIdle && v.active == 0
		if freed += v.ms.SizeGB; freed >= need-1e-9 {
			return victims, allIdle
		}
	}
	return victims, false
}

// usedGBLocked is the VRAM held by loaded and loading models.
func (e *engine) usedGBLocked() float64 {
	var used float64
	for _, m := range e.models {
		if m.res != notLoaded {
			used += m.ms.SizeGB
		}
	}
	return used
}

// releaseModel ends one request's hold on m.
func (e *engine) releaseModel(m *modelRun) {
	s := e.s
	s.mu.Lock()
	m.active--
	m.lastUsed = time.Now()
	s.notifyLocked()
	s.mu.Unlock()
}

// expireIdleLocked unloads Ollama's models idle past their keep-alive.
// Keep-alive is a retention, not a delay: under Instant models stay.
func (e *engine) expireIdleLocked(now time.Time) {
	s := e.s
	if s.cfg.Spec.Backend != BackendOllama || s.clock.instant {
		return
	}
	keep := s.keepAlive()
	for _, m := range e.models {
		if m.res == loaded && m.active == 0 && m.drain == 0 && now.Sub(m.lastUsed) >= keep {
			m.res = notLoaded
			s.counters.expiries++
			s.notifyLocked()
		}
	}
}

// beginDecode counts a request's streams (one per choice) as decoding;
// its prompt takes KV cache once.
func (e *engine) beginDecode(m *modelRun, promptTokens, streams int) {
	s := e.s
	s.mu.Lock()
	e.decoding += streams
	m.decoding += streams
	e.kvTokens += promptTokens
	s.counters.maxDecoding = max(s.counters.maxDecoding, e.decoding)
	s.notifyLocked()
	s.mu.Unlock()
}

// decodeStep accounts k tokens decoded by one stream and returns how long
// they take in simulated time at the rate the stream gets now.
func (e *engine) decodeStep(m *modelRun, k int) time.Duration {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	n := max(e.decoding, 1)
	dt := float64(k) / StreamRate(m.ms.TokensPerSec, n)
	// Each of n concurrent streams books 1/n of its time, so the sum is the
	// time the GPU was busy decoding, not n times it.
	s.counters.busy += seconds(dt / float64(n))
	s.counters.decodeTime += seconds(dt)
	s.counters.completionTokens[m.ms.Name] += int64(k)
	e.kvTokens += k
	return seconds(dt)
}

// endDecode ends a request's streams; their tokens leave the KV cache.
func (e *engine) endDecode(m *modelRun, streams, kv int) {
	s := e.s
	s.mu.Lock()
	e.decoding -= streams
	m.decoding -= streams
	e.kvTokens -= kv
	s.notifyLocked()
	s.mu.Unlock()
}

// keepAlive is how long an idle Ollama model stays, on the wall clock: the
// spec's keep-alive scaled like every delay, but never under MinKeepAlive
// (or the spec's own keep-alive, when that is shorter).
//
// Keep-alive is the server's wall-clock policy, and the gaps it is measured
// against are mostly the client's own time (round trips, scheduling,
// judging), which no time scale shrinks. Scaled all the way, 5 minutes at
// a scale of 1e-6 is 300 µs: a model would expire between two
// back-to-back requests and be loaded again, which a real server with
// minutes against milliseconds never does. A floor of a second is far
// above any such gap, so runs load what a real server would, while a demo
// at 0.01 still shows an idle model unloaded after 3 s.
func (s *Server) keepAlive() time.Duration {
	k := s.cfg.Spec.KeepAlive
	return max(s.clock.wall(k), min(k, MinKeepAlive))
}
