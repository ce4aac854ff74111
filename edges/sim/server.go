package sim

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"pitwall/gpu/simspec"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes one simulated server.
type Config struct {
	Name    string
	Addr    string                   // listen address; "127.0.0.1:0" (any free port) by default
	Slots   int                      // requests decoded at once (default 1); more wait in a queue
	Models  []string                 // models it offers
	Spec    simspec.Server           // backend, GPUs, load bandwidth, faults, preload
	Catalog map[string]simspec.Model // by model name; a model with no entry gets defaults
	// TimeScale multiplies every delay: 1 is real time, 0.01 makes a 30 s
	// load take 0.3 s, and 0 makes every delay zero, as Instant does (so
	// time_scale = 0 in a config means instant wherever it is read).
	// Negative, NaN and infinite scales are refused.
	TimeScale float64
	// Instant makes every delay zero (benchmarks) whatever TimeScale says;
	// replies and accounting are the same as with delays.
	Instant bool
	// Answers is the oracle from the battery, keyed by the exact content of
	// a test's last user message.
	Answers map[string]Answer
	Seed    int64
	Logger  *slog.Logger
}

// Answer is the right answer to one prompt, and the category whose skill
// decides whether a model gives it.
type Answer struct {
	Category string         // picks simspec.Model.Skills[Category], else Skill
	Content  string         // a right textual answer (e.g. the test's reference)
	ToolName string         // a right tool call, when the test expects one
	ToolArgs map[string]any // its arguments
	JSON     bool           // the right answer is a JSON object (Content holds it)
	// Exact makes a right textual reply exactly Content, with no
	// explanatory text after it (for tests that check equality).
	Exact bool
	// Agent says the test is a tool loop: without a ToolName, the model
	// opens it with a look at what its task names (agent_open.go).
	Agent bool
}

// Server is one simulated OpenAI-compatible server on loopback.
type Server struct {
	cfg   Config // normalized; read-only after Start
	clock clock
	log   *slog.Logger
	specs map[string]simspec.Model // every offered model, defaults filled

	ids     atomic.Uint64 // completion ids
	idBase  uint64
	started time.Time
	wg      sync.WaitGroup // handlers and the server's own goroutines
	closeCh chan struct{}  // closed by Close: ends pending restarts

	mu     sync.Mutex
	closed bool
	up     bool
	gen    *generation
	addr   string // host:port, fixed by the first listen
	faults simspec.Faults
	chats  int64 // chat requests accepted, across restarts
	// attempts counts the requests of each content (requestHash) seen, for
	// fault draws: a fault falls on a request and its attempt, not on its
	// place in the order of arrival, so a seed gives the same faults to the
	// same cells however concurrency orders them.
	attempts map[uint64]uint64
	changed  chan struct{}
	counters counters
}

// generation is one life of the server between a start and a crash: a
// crashed process loses its VRAM and queue, so a restart begins afresh.
type generation struct {
	n      int
	srv    *http.Server
	ctx    context.Context // cancelled by a crash or Close; every request's context descends from it
	cancel context.CancelFunc
	eng    *engine
	chats  int // chat requests in this generation, for crash_after
}

// Start listens and serves; the server accepts requests when it returns.
func Start(cfg Config) (*Server, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:     cfg,
		clock:   clock{scale: cfg.TimeScale, instant: cfg.Instant},
		log:     log.With("sim", cfg.Name),
		specs:   make(map[string]simspec.Model, len(cfg.Models)),
		closeCh: make(chan struct{}),
		faults:  cfg.Spec.Faults,
		changed: make(chan struct{}),
		idBase:  uint64(time.Now().UnixNano()),
		started: time.Now(),
	}
	s.counters.init()
	for _, m := range cfg.Models {
		s.specs[m] = cfg.model(m)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("sim %s: listen on %s: %w", cfg.Name, cfg.Addr, err)
	}
	s.addr = ln.Addr().String()
	if err := s.serve(ln); err != nil {
		return nil, err
	}
	s.log.Info("simulated server up", "url", s.URL(), "backend", cfg.Spec.Backend, "models", cfg.Models)
	return s, nil
}

// URL is the server's OpenAI base URL, "http://127.0.0.1:PORT/v1".
func (s *Server) URL() string { return "http://" + s.addr + "/v1" }

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.addr }

// Name is the server's name.
func (s *Server) Name() string { return s.cfg.Name }

// serve starts a new generation on ln.
func (s *Server) serve(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = ln.Close()
		return fmt.Errorf("sim %s: closed", s.cfg.Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &generation{n: 1, ctx: ctx, cancel: cancel, eng: newEngine(s)}
	if s.gen != nil {
		g.n = s.gen.n + 1
	}
	g.srv = &http.Server{
		Handler:           s.track(s.routes(g)),
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.gen, s.up = g, true
	s.notifyLocked()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// Serve returns ErrServerClosed on a crash or Close; nothing to report.
		_ = g.srv.Serve(ln)
	}()
	return nil
}

// track counts a handler in the server's wait group, so that Close waits
// for every handler; after Close it refuses new ones.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.writeError(w, apiError{kind: errUnavailable, message: "server is shutting down"})
			return
		}
		s.wg.Add(1)
		s.mu.Unlock()
		defer s.wg.Done()
		h.ServeHTTP(w, r)
	})
}

// Close stops serving, ends in-flight requests and streams, and waits for
// every goroutine of the server.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closeCh)
	g, up := s.gen, s.up
	s.up = false
	s.notifyLocked()
	s.mu.Unlock()
	var err error
	if up {
		err = g.srv.Close()
		g.cancel()
	}
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("sim %s: close: %w", s.cfg.Name, err)
	}
	return nil
}

// Crash closes the listener and drops every open connection now, as a
// process that dies would; Restart listens again on the same port. A
// manual Crash is never restarted by itself (simspec.Faults.RestartAfter only
// follows crashes that simspec.Faults.CrashAfter causes).
func (s *Server) Crash() {
	s.mu.Lock()
	g := s.crashLocked()
	s.mu.Unlock()
	s.drop(g)
}

// crashLocked marks the current generation down and returns it for drop,
// or nil when it is down already.
func (s *Server) crashLocked() *generation {
	if !s.up || s.closed {
		return nil
	}
	s.up = false
	s.counters.crashes++
	s.notifyLocked()
	return s.gen
}

func (s *Server) drop(g *generation) {
	if g == nil {
		return
	}
	// Connections first: a handler woken by the cancellation must find its
	// connection gone, not answer an empty 200.
	_ = g.srv.Close() // the listener's close error says nothing a crash needs
	g.cancel()
	s.log.Warn("simulated crash", "generation", g.n)
}

// crashByFault crashes the server for simspec.Faults.CrashAfter and schedules the
// restart that simspec.Faults.RestartAfter asks for.
func (s *Server) crashByFault(after time.Duration) {
	s.mu.Lock()
	g := s.crashLocked()
	s.mu.Unlock()
	s.drop(g) // before the restart is scheduled: the port must be free for it
	if g == nil || after <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.wg.Add(1)
		go s.restartLater(after)
	}
}

func (s *Server) restartLater(after time.Duration) {
	defer s.wg.Done()
	t := time.NewTimer(s.clock.wall(after))
	defer t.Stop()
	select {
	case <-t.C:
		if err := s.Restart(); err != nil {
			s.log.Error("simulated restart failed", "err", err)
		}
	case <-s.closeCh:
	}
}

// Restart listens again on the same port after a crash. The new process
// starts with only the preloaded models resident and an empty queue.
func (s *Server) Restart() error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return fmt.Errorf("sim %s: restart: server is closed", s.cfg.Name)
	case s.up:
		s.mu.Unlock()
		return fmt.Errorf("sim %s: restart: server is up", s.cfg.Name)
	}
	s.mu.Unlock()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("sim %s: restart on %s: %w", s.cfg.Name, s.addr, err)
	}
	s.mu.Lock()
	if s.up { // a concurrent Restart won
		s.mu.Unlock()
		_ = ln.Close()
		return fmt.Errorf("sim %s: restart: server is up", s.cfg.Name)
	}
	s.counters.restarts++
	s.mu.Unlock()
	if err := s.serve(ln); err != nil {
		return err
	}
	s.log.Info("simulated restart", "url", s.URL())
	return nil
}

// SetFaults changes the injected faults from the next request on.
func (s *Server) SetFaults(f simspec.Faults) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// notifyLocked wakes everything waiting for a change of state.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
