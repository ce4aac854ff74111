package gpu

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/gpu/simspec"
	"pitwall/gpu/telemetry"
	"pitwall/internal/oaitest"
)

// fastProbes makes probing quick enough for a test to wait on it.
func fastProbes(o Options) Options {
	o.ProbeInterval = 20 * time.Millisecond
	o.ProbeTimeout = time.Second
	o.ProbeBackoffMin = 5 * time.Millisecond
	o.ProbeBackoffMax = 40 * time.Millisecond
	return o
}

// startSim starts a simulated LM Studio for a test and closes it after.
func startSim(t *testing.T, name string, slots int, models []string, preload []string, catalog map[string]simspec.Model) *sim.Server {
	t.Helper()
	s, err := sim.Start(sim.Config{Name: name, Slots: slots, Models: models, Catalog: catalog, TimeScale: 0.1,
		Spec: simspec.Server{Backend: sim.BackendLMStudio, LoadGBps: 10, Preload: preload}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func simConfig(s *sim.Server, slots int, models []string) ServerConfig {
	return ServerConfig{Config: client.Config{Name: s.Name(), URL: s.URL(), Kind: "sim"}, Slots: slots, Models: models}
}

// waitFleet waits for cond on the fleet's state, failing the test if it
// never holds (a hang is a bug; no test depends on this bound).
func waitFleet(t *testing.T, f *Fleet, what string, cond func(map[string]telemetry.ServerState) bool) map[string]telemetry.ServerState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := f.WaitState(ctx, func(st []telemetry.ServerState) bool { return cond(byServer(st)) })
	if err != nil {
		t.Fatalf("waiting for %s: %v; state %+v", what, err, st)
	}
	return byServer(st)
}

func byServer(st []telemetry.ServerState) map[string]telemetry.ServerState {
	out := map[string]telemetry.ServerState{}
	for _, s := range st {
		out[s.Name] = s
	}
	return out
}

// cellRunner plays the runner's part in failover: a job that ends
// unavailable is submitted again, and each cell's attempts are kept.
type cellRunner struct {
	t     *testing.T
	f     *Fleet
	mu    sync.Mutex
	wg    sync.WaitGroup
	cells map[string]*cellLog
}

type cellLog struct {
	attempts []attempt
	done     int // attempts that completed
}

type attempt struct {
	server string
	err    error
}

func (r *cellRunner) submit(cell, model, pin string) {
	r.mu.Lock()
	if r.cells[cell] == nil {
		r.cells[cell] = &cellLog{}
		r.wg.Add(1)
	}
	r.mu.Unlock()
	var server atomic.Value
	server.Store("")
	r.f.Submit(context.Background(), &Job{
		Request:    chat.Request{Model: model, Messages: []chat.Message{{Role: "user", Content: cell}}, MaxTokens: 40},
		Purpose:    chat.PurposeInference,
		Pin:        pin,
		Dispatched: func(s string, _ bool) { server.Store(s) },
		Done: func(res chat.Result, err error) {
			r.mu.Lock()
			c := r.cells[cell]
			c.attempts = append(c.attempts, attempt{server: server.Load().(string), err: err})
			if err == nil {
				c.done++
			}
			r.mu.Unlock()
			if chat.ClassOf(err) == chat.ClassUnavailable {
				r.submit(cell, model, pin) // failover: the runner's own retry
				return
			}
			r.wg.Done()
		},
	})
}

func (r *cellRunner) wait() {
	r.t.Helper()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		r.t.Fatal("cells never finished")
	}
}

func TestFleetFailsOverWhenAServerCrashesAndTakesItBack(t *testing.T) {
	catalog := map[string]simspec.Model{
		"m": {SizeGB: 4, TokensPerSec: 200, ReplyTokens: 40},
		"n": {SizeGB: 2, TokensPerSec: 400, ReplyTokens: 10},
	}
	a := startSim(t, "a", 2, []string{"m", "n"}, []string{"m"}, catalog)
	b := startSim(t, "b", 2, []string{"m", "n"}, []string{"m"}, catalog)
	f := NewFleet([]ServerConfig{simConfig(a, 2, []string{"m", "n"}), simConfig(b, 2, []string{"m", "n"})},
		fastProbes(Options{Models: map[string]placement.ModelView{"m": {SizeGB: 4}, "n": {SizeGB: 2}}}))
	defer f.Close()
	if errs := f.Discover(context.Background()); errs["a"] != nil || errs["b"] != nil {
		t.Fatalf("Discover: %v", errs)
	}
	r := &cellRunner{t: t, f: f, cells: map[string]*cellLog{}}

	// a loads n beside m, so that its restart visibly forgets it.
	r.submit("load-n", "n", "a")
	r.wait()
	if st := waitFleet(t, f, "a holding m and n", func(st map[string]telemetry.ServerState) bool {
		return slices.Equal(st["a"].Resident, []string{"m", "n"})
	}); !st["a"].Up {
		t.Fatalf("a is down before the crash: %q", st["a"].DownReason)
	}

	const cells = 24
	for i := range cells {
		r.submit(fmt.Sprint("cell-", i), "m", "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := a.WaitState(ctx, func(s sim.State) bool { return s.Decoding == 2 }); err != nil {
		t.Fatalf("a never streamed two replies: %v", err)
	}
	a.Crash()
	r.wait()

	st := waitFleet(t, f, "a down", func(st map[string]telemetry.ServerState) bool { return !st["a"].Up })
	if !strings.Contains(st["a"].DownReason, "refused") || len(st["a"].Resident) != 0 {
		t.Errorf("crashed a: reason %q, resident %v; want a refused connection and nothing known resident",
			st["a"].DownReason, st["a"].Resident)
	}
	failedOver := 0
	for i := range cells {
		c := r.cells[fmt.Sprint("cell-", i)]
		if c.done != 1 {
			t.Errorf("cell %d completed %d times, want once: %+v", i, c.done, c.attempts)
		}
		for j, at := range c.attempts {
			if at.err == nil {
				continue
			}
			failedOver++
			if chat.ClassOf(at.err) != chat.ClassUnavailable || at.server != "a" || j == len(c.attempts)-1 {
				t.Errorf("cell %d attempt %d on %s: %v; want only unavailable failures on a, each followed by another attempt",
					i, j, at.server, at.err)
			}
		}
		if last := c.attempts[len(c.attempts)-1]; len(c.attempts) > 1 && last.server != "b" {
			t.Errorf("cell %d failed over to %s, want b", i, last.server)
		}
	}
	if failedOver < 2 {
		t.Errorf("%d attempts failed over; want at least the two streaming on a when it crashed", failedOver)
	}

	if err := a.Restart(); err != nil {
		t.Fatal(err)
	}
	st = waitFleet(t, f, "a back", func(st map[string]telemetry.ServerState) bool { return st["a"].Up })
	if !slices.Equal(st["a"].Resident, []string{"m"}) || st["a"].DownReason != "" {
		t.Errorf("a after its restart: resident %v, reason %q; want only its preloaded m", st["a"].Resident, st["a"].DownReason)
	}
	for i := range 3 {
		r.submit(fmt.Sprint("after-", i), "m", "a")
	}
	r.wait()
	for i := range 3 {
		c := r.cells[fmt.Sprint("after-", i)]
		if len(c.attempts) != 1 || c.done != 1 || c.attempts[0].server != "a" {
			t.Errorf("a job pinned to the restarted a: %+v, want one success on a", c.attempts)
		}
	}
}

func TestFleetQueuedJobsWaitVisiblyWhileNoServerOffersTheirModel(t *testing.T) {
	a := startSim(t, "a", 1, []string{"m"}, []string{"m"}, nil)
	f := NewFleet([]ServerConfig{simConfig(a, 1, []string{"m"})}, fastProbes(Options{}))
	defer f.Close()
	f.Discover(context.Background())
	a.Crash()
	waitFleet(t, f, "a down", func(st map[string]telemetry.ServerState) bool { return !st["a"].Up })

	tj := trackJob("m", "waits")
	f.Submit(context.Background(), tj.job)
	if st := f.State()[0]; st.Queue != 1 || !tj.pending() {
		t.Fatalf("while its only server is down: queue %d, pending %v; want the job waiting in view", st.Queue, tj.pending())
	}
	if err := a.Restart(); err != nil {
		t.Fatal(err)
	}
	wantOK(t, tj.wait(t))
}

func TestFleetMarksAServerThatStopsAnsweringDownAndEndsItsJobs(t *testing.T) {
	var silent atomic.Bool
	arrived := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
		arrived <- struct{}{}
		<-r.Context().Done() // hangs, as a wedged server does
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if silent.Load() {
			<-r.Context().Done() // no answer in time
			return
		}
		oaitest.Models(w, "m")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	opts := fastProbes(Options{})
	opts.ProbeTimeout = 30 * time.Millisecond
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1, Models: []string{"m"}}}, opts)
	defer f.Close()

	tj := trackJob("m", "hangs")
	tj.job.Timeout = time.Hour
	f.Submit(context.Background(), tj.job)
	<-arrived
	silent.Store(true)
	o := tj.wait(t)
	wantClass(t, o, chat.ClassUnavailable)
	st := f.State()[0]
	if st.Up || !strings.Contains(st.DownReason, "no answer in time") {
		t.Errorf("after its probes time out: up %v, reason %q", st.Up, st.DownReason)
	}
}
