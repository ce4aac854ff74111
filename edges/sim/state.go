package sim

import (
	"context"
	"maps"
	"net/http"
	"time"
)

// counters are a server's cumulative accounting, across restarts; guarded
// by the server's mutex.
type counters struct {
	requests         int64
	requestsBy       map[string]int64
	served           map[string]int64
	loads            map[string]int64
	evictions        int64
	expiries         int64
	faults           map[string]int64
	crashes          int
	restarts         int
	maxBusy          int
	maxDecoding      int
	promptTokens     map[string]int64
	completionTokens map[string]int64
	busy             time.Duration // simulated GPU time spent decoding
	decodeTime       time.Duration // simulated stream time spent decoding, summed over streams
}

func (c *counters) init() {
	c.requestsBy = map[string]int64{}
	c.served = map[string]int64{}
	c.loads = map[string]int64{}
	c.faults = map[string]int64{}
	c.promptTokens = map[string]int64{}
	c.completionTokens = map[string]int64{}
}

// Stats is a server's accounting since Start, across crashes and restarts,
// for tests and benchmarks.
type Stats struct {
	Requests  int64            // chat requests accepted (valid, for an offered model)
	Served    map[string]int64 // replies finished whole and well-formed, by model
	Loads     map[string]int64 // model loads made, by model (preloads not counted)
	Evictions int64            // models evicted to make room for another
	Expiries  int64            // models unloaded after Ollama's keep-alive
	Faults    map[string]int64 // injected faults by kind: error, rate_limit, hang, cut, malformed, crash
	Crashes   int
	Restarts  int
	// MaxBusy is the most slots held at once; MaxDecoding the most streams
	// decoding at once.
	MaxBusy          int
	MaxDecoding      int
	PromptTokens     int64
	CompletionTokens int64
	// GPUBusy is each GPU's time spent decoding, in simulated time (the
	// same under any TimeScale and under Instant). A server's GPUs hold
	// its models together, so they are busy together.
	GPUBusy []time.Duration
}

// Stats returns the server's accounting so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.counters
	st := Stats{
		Requests:    c.requests,
		Served:      maps.Clone(c.served),
		Loads:       maps.Clone(c.loads),
		Evictions:   c.evictions,
		Expiries:    c.expiries,
		Faults:      maps.Clone(c.faults),
		Crashes:     c.crashes,
		Restarts:    c.restarts,
		MaxBusy:     c.maxBusy,
		MaxDecoding: c.maxDecoding,
		GPUBusy:     make([]time.Duration, len(s.cfg.Spec.GPUs)),
	}
	for _, v := range c.promptTokens {
		st.PromptTokens += v
	}
	for _, v := range c.completionTokens {
		st.CompletionTokens += v
	}
	for i := range st.GPUBusy {
		st.GPUBusy[i] = c.busy
	}
	return st
}

// State is a server's state at an instant, as GET /sim/state serves it.
type State struct {
	Name       string                `json:"name"`
	Backend    string                `json:"backend"`
	Up         bool                  `json:"up"`
	Generation int                   `json:"generation"` // 1 at start, +1 per restart
	Slots      int                   `json:"slots"`
	Busy       int                   `json:"busy"`  // slots held
	Queue      int                   `json:"queue"` // requests waiting for a slot
	Decoding   int                   `json:"decoding"`
	InFlight   int                   `json:"in_flight"` // chat requests being handled, in any stage
	Resident   []string              `json:"resident"`  // loaded models, in offered order
	Loading    []string              `json:"loading"`
	VRAMUsedGB float64               `json:"vram_used_gb"`
	VRAMGB     float64               `json:"vram_gb"`
	Models     map[string]ModelState `json:"models"`
	Requests   int64                 `json:"requests"` // chat requests accepted since Start
}

// ModelState is one model's part of State.
type ModelState struct {
	State     string `json:"state"`     // loaded | loading | not-loaded
	Active    int    `json:"active"`    // requests holding it
	Decoding  int    `json:"decoding"`  // of those, streaming
	Waiting   int    `json:"waiting"`   // requests for it in the slot queue
	Draining  bool   `json:"draining"`  // a load waits for it to finish to evict it
	Requests  int64  `json:"requests"`  // since Start
	Served    int64  `json:"served"`    // since Start
	Loads     int64  `json:"loads"`     // since Start
	Completed int64  `json:"completed"` // completion tokens since Start
}

// State returns the server's state now.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateLocked()
}

// WaitState waits until cond holds for the server's state and returns that
// state; it is woken by every change (slots, queue, loads, streams,
// crashes), so tests wait on the state itself rather than on time.
func (s *Server) WaitState(ctx context.Context, cond func(State) bool) (State, error) {
	for {
		s.mu.Lock()
		st := s.stateLocked()
		ch := s.changed
		s.mu.Unlock()
		if cond(st) {
			return st, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

func (s *Server) stateLocked() State {
	e := s.gen.eng
	e.expireIdleLocked(time.Now())
	st := State{
		Name:       s.cfg.Name,
		Backend:    s.cfg.Spec.Backend,
		Up:         s.up,
		Generation: s.gen.n,
		Slots:      s.cfg.Slots,
		Busy:       e.busy,
		Queue:      len(e.queue),
		Decoding:   e.decoding,
		InFlight:   e.inFlight,
		Resident:   []string{},
		Loading:    []string{},
		VRAMUsedGB: e.usedGBLocked(),
		VRAMGB:     vramGB(s.cfg.Spec),
		Models:     make(map[string]ModelState, len(e.models)),
		Requests:   s.counters.requests,
	}
	for _, name := range s.cfg.Models {
		m := e.models[name]
		switch m.res {
		case loaded:
			st.Resident = append(st.Resident, name)
		case loading:
			st.Loading = append(st.Loading, name)
		}
		st.Models[name] = ModelState{
			State:     m.res.String(),
			Active:    m.active,
			Decoding:  m.decoding,
			Waiting:   m.waiting,
			Draining:  m.drain > 0,
			Requests:  s.counters.requestsBy[name],
			Served:    s.counters.served[name],
			Loads:     s.counters.loads[name],
			Completed: s.counters.completionTokens[name],
		}
	}
	return st
}

// handleState serves GET /sim/state.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.State())
}
