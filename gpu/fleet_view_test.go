package gpu

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
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

// recordingPolicy keeps a copy of each view it is shown and places as
// placement.Default does.
type recordingPolicy struct {
	mu    sync.Mutex
	views []placement.FleetView
}

func (p *recordingPolicy) Place(v placement.FleetView) []placement.Assignment {
	c := v
	c.Models = maps.Clone(v.Models)
	c.Queue = slices.Clone(v.Queue)
	c.Servers = slices.Clone(v.Servers)
	for i, s := range c.Servers {
		c.Servers[i].Resident = maps.Clone(s.Resident)
		c.Servers[i].Streaming = maps.Clone(s.Streaming)
	}
	p.mu.Lock()
	p.views = append(p.views, c)
	p.mu.Unlock()
	return placement.Default.Place(v)
}

// last is the latest view the policy was shown.
func (p *recordingPolicy) last() placement.FleetView {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.views[len(p.views)-1]
}

func TestFleetShowsThePolicyResidencyVRAMAndJobTimes(t *testing.T) {
	catalog := map[string]simspec.Model{
		"m": {SizeGB: 4, TokensPerSec: 400, ReplyTokens: 20},
		"n": {SizeGB: 6, TokensPerSec: 400, ReplyTokens: 20},
		"p": {SizeGB: 3, TokensPerSec: 400, ReplyTokens: 20},
	}
	// p is resident on the server without the fleet ever loading it: only
	// a probe can tell.
	s := startSim(t, "gpu0", 2, []string{"m", "n", "p"}, []string{"p"}, catalog)
	rec := &recordingPolicy{}
	models := map[string]placement.ModelView{"m": {SizeGB: 4, LoadTime: 400 * time.Millisecond}, "n": {SizeGB: 6}, "p": {SizeGB: 3}}
	f := NewFleet([]ServerConfig{simConfig(s, 2, []string{"m", "n", "p"})}, fastProbes(Options{Policy: rec, Models: models}))
	defer f.Close()
	if errs := f.Discover(context.Background()); errs["gpu0"] != nil {
		t.Fatal(errs)
	}

	for i, model := range []string{"m", "n", "m"} {
		tj := trackJob(model, fmt.Sprint(i))
		f.Submit(context.Background(), tj.job)
		wantOK(t, tj.wait(t))
	}
	probe := trackJob("p", "probe")
	f.Submit(context.Background(), probe.job)
	wantOK(t, probe.wait(t))

	v := rec.last()
	sv := v.Servers[0]
	if want := map[string]bool{"m": true, "n": true, "p": true}; !maps.Equal(sv.Resident, want) {
		t.Errorf("Resident = %v, want %v: the preloaded p from the probe, m and n from the fleet's loads", sv.Resident, want)
	}
	if sv.VRAMTotalGB != 24 || sv.VRAMUsedGB != 13 {
		t.Errorf("VRAM %.1f of %.1f GB, want 13 of 24", sv.VRAMUsedGB, sv.VRAMTotalGB)
	}
	if v.Models["m"].LoadTime != 400*time.Millisecond || v.Models["m"].SizeGB != 4 {
		t.Errorf("model m as the policy sees it: %+v; want Options.Models' size and load time", v.Models["m"])
	}
	for _, m := range []string{"m", "n"} {
		if v.Models[m].JobTime <= 0 {
			t.Errorf("model %s: JobTime %v, want the mean of its jobs so far", m, v.Models[m].JobTime)
		}
	}
	if models["m"].JobTime != 0 {
		t.Error("the fleet wrote its measurements into the caller's Options.Models")
	}
}

func TestFleetStateShowsTheGPUsOfEachServer(t *testing.T) {
	simServer, err := sim.Start(sim.Config{Name: "sim0", Slots: 1, Models: []string{"m"}, Instant: true,
		Spec: simspec.Server{Backend: sim.BackendLMStudio, GPUs: []simspec.GPU{{VRAMGB: 24}, {VRAMGB: 48}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = simServer.Close() })
	// telemetry.Watcher for the real server: this machine's GPUs 0 and 1, read
	// from a simulator's /sim/gpus.
	telSrc, err := sim.Start(sim.Config{Name: "tel", Models: []string{"x"}, Instant: true,
		Spec: simspec.Server{GPUs: []simspec.GPU{{VRAMGB: 12}, {VRAMGB: 16}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = telSrc.Close() })
	tel := telemetry.Start(context.Background(), telemetry.Options{Source: "url:http://" + telSrc.Addr() + "/sim/gpus", Interval: 10 * time.Millisecond})
	t.Cleanup(tel.Close)
	<-tel.Updated()
	real := oaitest.Server(t, nil, "m")

	f := NewFleet([]ServerConfig{
		{Config: client.Config{Name: "sim0", URL: simServer.URL(), Kind: "sim"}, Slots: 1},
		{Config: client.Config{Name: "real", URL: real.URL + "/v1", Kind: "vllm"}, Slots: 1, GPUs: []int{1}},
		{Config: client.Config{Name: "nogpus", URL: real.URL + "/v1", Kind: "vllm"}, Slots: 1},
	}, fastProbes(Options{Telemetry: tel}))
	defer f.Close()
	f.Discover(context.Background())

	st := byServer(f.State())
	var simTotals []float64
	for _, g := range st["sim0"].GPUs {
		simTotals = append(simTotals, g.MemTotalMiB)
	}
	if !slices.Equal(simTotals, []float64{24 * 1024, 48 * 1024}) {
		t.Errorf("sim0 GPUs' memory %v MiB, want its two simulated GPUs", simTotals)
	}
	if g := st["real"].GPUs; len(g) != 1 || g[0].Index != 1 || g[0].MemTotalMiB != 16*1024 {
		t.Errorf("real server's GPUs %+v, want telemetry's GPU 1 (16 GB) alone", g)
	}
	if g := st["nogpus"].GPUs; len(g) != 0 {
		t.Errorf("a server configured on no GPU shows %+v", g)
	}
	if st["real"].VRAMTotalGB != 16 || st["sim0"].VRAMTotalGB != 72 {
		t.Errorf("VRAM totals: real %.0f, sim0 %.0f GB; want 16 from telemetry, 72 from the simulator",
			st["real"].VRAMTotalGB, st["sim0"].VRAMTotalGB)
	}
}

// fakeLMStudio serves LM Studio's /api/v0/models with a resident set a
// test changes, as when a person loads or unloads a model by hand.
func fakeLMStudio(t *testing.T, models ...string) (url string, setLoaded func(...string)) {
	var mu sync.Mutex
	loaded := map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) { oaitest.Models(w, models...) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { oaitest.Reply(w, oaitest.Decode(r).Model, "ok") })
	mux.HandleFunc("GET /api/v0/models", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[`)
		for i, m := range models {
			state := "not-loaded"
			if loaded[m] {
				state = "loaded"
			}
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"id":%q,"type":"llm","state":%q}`, m, state)
		}
		fmt.Fprint(w, `]}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func(ms ...string) {
		mu.Lock()
		defer mu.Unlock()
		clear(loaded)
		for _, m := range ms {
			loaded[m] = true
		}
	}
}

func TestFleetProbesFollowResidencyChangesMadeOutsideIt(t *testing.T) {
	for _, kind := range []chat.Kind{chat.KindLMStudio, ""} {
		t.Run("kind="+string(kind), func(t *testing.T) {
			url, setLoaded := fakeLMStudio(t, "a", "b")
			setLoaded("a")
			f := NewFleet([]ServerConfig{{Config: client.Config{Name: "lms", URL: url, Kind: kind}, Slots: 1, Models: []string{"a", "b"}}}, fastProbes(Options{}))
			defer f.Close()
			st := waitFleet(t, f, "a resident", func(st map[string]telemetry.ServerState) bool { return slices.Equal(st["lms"].Resident, []string{"a"}) })
			if st["lms"].Kind != "lmstudio" {
				t.Errorf("Kind %q, want lmstudio, as configured or detected", st["lms"].Kind)
			}
			setLoaded("b")
			waitFleet(t, f, "b resident instead", func(st map[string]telemetry.ServerState) bool { return slices.Equal(st["lms"].Resident, []string{"b"}) })
			setLoaded()
			waitFleet(t, f, "nothing resident", func(st map[string]telemetry.ServerState) bool { return len(st["lms"].Resident) == 0 })
		})
	}
}

func TestFleetSubmitAllShowsThePolicyTheWholeBatch(t *testing.T) {
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) { oaitest.Reply(w, oaitest.Decode(r).Model, "ok") }, "a", "b")
	rec := &recordingPolicy{}
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1, Models: []string{"a", "b"}}},
		Options{Policy: rec, ProbeInterval: -1})
	defer f.Close()
	var jobs []*trackedJob
	var batch []*Job
	for i, model := range []string{"a", "b", "zzz", "a", "b"} {
		tj := trackJob(model, fmt.Sprint(i))
		jobs = append(jobs, tj)
		batch = append(batch, tj.job)
	}
	f.SubmitAll(context.Background(), batch)
	if jobs[2].pending() {
		t.Fatal("a job no server offers was queued")
	}
	wantClass(t, jobs[2].wait(t), chat.ClassHTTP4xx)
	for i, tj := range jobs {
		if i != 2 {
			wantOK(t, tj.wait(t))
		}
	}
	rec.mu.Lock()
	first := rec.views[0]
	rec.mu.Unlock()
	var models []string
	for _, j := range first.Queue {
		models = append(models, j.Model)
	}
	if !slices.Equal(models, []string{"a", "b", "a", "b"}) {
		t.Errorf("the policy's first view queued %v, want the whole batch in order", models)
	}
}
