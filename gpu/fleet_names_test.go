package gpu

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/gpu/probe"
	"pitwall/gpu/simspec"
)

// spelledSim starts a simulated server of backend (ollama, lmstudio) that
// lists models in its own spelling, with preload held from the start.
func spelledSim(t *testing.T, name, backend string, models, preload []string) *sim.Server {
	t.Helper()
	s, err := sim.Start(sim.Config{Name: name, Slots: 1, Models: models, Instant: true,
		Spec: simspec.Server{Backend: backend, Preload: preload}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// warmups records the fleet's warm-ups as server/model.
type warmups struct {
	mu   sync.Mutex
	seen []string
}

func (w *warmups) hook(server, model string) func(chat.Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, server+"/"+model)
	return func(chat.Result, error) {}
}

func (w *warmups) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// spelledFleet is a fleet of sims as the servers they play (kind ollama or
// lmstudio, so that residency is read from their native endpoints), one
// slot each, that learns their lists by discovery.
func spelledFleet(t *testing.T, opts Options, backends map[*sim.Server]string) *Fleet {
	t.Helper()
	var cfgs []ServerConfig
	for _, s := range slices.SortedFunc(maps.Keys(backends), func(a, b *sim.Server) int {
		return cmp.Compare(a.Name(), b.Name())
	}) {
		cfgs = append(cfgs, ServerConfig{Config: client.Config{Name: s.Name(), URL: s.URL(), Kind: chat.Kind(backends[s])}, Slots: 1})
	}
	f := NewFleet(cfgs, opts)
	t.Cleanup(f.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, err := range f.Discover(ctx) {
		if err != nil {
			t.Fatalf("discover %s: %v", name, err)
		}
	}
	return f
}

// runAll submits n jobs of model at once and returns how many each server
// ran, failing on any error.
func runAll(t *testing.T, f *Fleet, model string, n int) map[string]int {
	t.Helper()
	var jobs []*Job
	var tracked []*trackedJob
	for i := range n {
		tj := trackJob(model, fmt.Sprint("q", i))
		tracked = append(tracked, tj)
		jobs = append(jobs, tj.job)
	}
	f.SubmitAll(context.Background(), jobs)
	ran := map[string]int{}
	for _, tj := range tracked {
		o := tj.wait(t)
		if o.err != nil {
			t.Fatalf("job %s: %v", tj.job.Request.Messages[0].Content, o.err)
		}
		ran[o.res.Server]++
	}
	return ran
}

// A model two servers spell two ways runs on both, each request naming it
// as its server lists it: the simulator answers an unknown name with a 404,
// and counts what it served by the name it was sent.
func TestFleetSendsEachServerTheModelAsItListsIt(t *testing.T) {
	s0 := spelledSim(t, "s0", sim.BackendOllama, []string{"m:latest"}, []string{"m:latest"})
	s1 := spelledSim(t, "s1", sim.BackendLMStudio, []string{"pub/m"}, []string{"pub/m"})
	var w warmups
	f := spelledFleet(t, Options{Warmup: w.hook}, map[*sim.Server]string{s0: sim.BackendOllama, s1: sim.BackendLMStudio})

	ran := runAll(t, f, "m", 6)
	if ran["s0"] == 0 || ran["s1"] == 0 || ran["s0"]+ran["s1"] != 6 {
		t.Fatalf("jobs ran %v, want the 6 spread over s0 and s1", ran)
	}
	for _, tc := range []struct {
		s    *sim.Server
		name string
	}{{s0, "m:latest"}, {s1, "pub/m"}} {
		st := tc.s.Stats()
		if want := map[string]int64{tc.name: int64(ran[tc.s.Name()])}; !maps.Equal(st.Served, want) {
			t.Errorf("%s served %v, want %v", tc.s.Name(), st.Served, want)
		}
		if len(st.Loads) != 0 {
			t.Errorf("%s loaded %v; it held the model from the start", tc.s.Name(), st.Loads)
		}
	}
	if got := w.list(); len(got) != 0 {
		t.Errorf("warm-ups %v; both servers held the model", got)
	}
	for _, s := range f.State() {
		if !slices.Equal(s.Resident, []string{"m"}) {
			t.Errorf("%s resident %v, want the fleet's name [m]", s.Name, s.Resident)
		}
	}
	if got := f.Offered(); !slices.Equal(got["s0"], []string{"m:latest"}) || !slices.Equal(got["s1"], []string{"pub/m"}) {
		t.Errorf("Offered = %v, want each server's own list", got)
	}
}

// A model the server reports held in its own spelling is the fleet's model
// resident: placement sends work to it without loading it again, whether
// the fleet met the name before the server's report (a judge model) or
// only when the jobs came.
func TestFleetCountsAModelHeldUnderTheServersSpellingAsResident(t *testing.T) {
	for _, tc := range []struct {
		name  string
		judge map[string]bool
	}{
		{"name met before the report", map[string]bool{"m": true}},
		{"name met when the jobs come", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s0 := spelledSim(t, "s0", sim.BackendOllama, []string{"m:latest", "other:latest"}, []string{"m:latest"})
			var w warmups
			f := spelledFleet(t, Options{Warmup: w.hook, JudgeModels: tc.judge}, map[*sim.Server]string{s0: sim.BackendOllama})

			if ran := runAll(t, f, "m", 3); ran["s0"] != 3 {
				t.Fatalf("jobs ran %v", ran)
			}
			if got := w.list(); len(got) != 0 {
				t.Errorf("warm-ups %v: the fleet loaded a model the server held as m:latest", got)
			}
			st := s0.Stats()
			if len(st.Loads) != 0 || st.Served["m:latest"] != 3 {
				t.Errorf("server loaded %v and served %v, want no load and 3 of m:latest", st.Loads, st.Served)
			}
			if got := f.State()[0].Resident; !slices.Equal(got, []string{"m"}) {
				t.Errorf("resident %v, want [m]", got)
			}
		})
	}
}

// The table each server keeps: what it offers under the fleet's names,
// the name sent, and its reports read back, made again when its list
// changes.
func TestServerNamesFollowTheList(t *testing.T) {
	s := newServer(ServerConfig{Config: client.Config{Name: "gpu0", Kind: "ollama"}, Slots: 1}, nil)
	for _, m := range []string{"m", "Other", "gone"} {
		s.learn(m)
	}
	if s.offered != nil {
		t.Fatalf("offered %v before the list is known", s.offered)
	}
	s.setOffered([]string{"m:latest", "other", "x:latest"})
	if want := map[string]bool{"m": true, "Other": true}; !maps.Equal(s.offered, want) {
		t.Errorf("offered %v, want %v", s.offered, want)
	}
	for name, want := range map[string]string{"m": "m:latest", "Other": "other", "gone": "gone"} {
		if got := s.sendAs(name); got != want {
			t.Errorf("sendAs(%q) = %q, want %q", name, got, want)
		}
	}
	if got := s.fleetNames([]string{"x:latest", "m:latest", "other"}); !slices.Equal(got, []string{"Other", "m", "x:latest"}) {
		t.Errorf("fleetNames = %v, want the fleet's names, and x:latest as the server spells it", got)
	}
	if s.fleetNames(nil) != nil {
		t.Error("a server that did not tell what it holds was read as holding nothing")
	}
	s.setOffered([]string{"gone:latest"})
	if want := map[string]bool{"gone": true}; !maps.Equal(s.offered, want) || s.sendAs("gone") != "gone:latest" {
		t.Errorf("after a new list: offered %v, gone sent as %q", s.offered, s.sendAs("gone"))
	}
}

// A probe's report of what the server holds, in its spelling, is read in
// the fleet's names once the fleet knows them.
func TestFleetReadsAProbesResidencyInItsNames(t *testing.T) {
	s := newServer(ServerConfig{Config: client.Config{Name: "gpu0", Kind: "ollama"}, Slots: 1, Models: []string{"m:latest", "x:latest"}}, nil)
	s.learn("m")
	f := &Fleet{}
	f.adoptLocked(s, probe.Result{Resident: []string{"m:latest", "x:latest"}}, s.res.ver, false)
	if got := heldModels(s); !slices.Equal(got, []string{"m", "x:latest"}) {
		t.Errorf("held %v, want [m x:latest]", got)
	}
	if !s.isResident("m") {
		t.Error("m is not resident")
	}
}

// What the options know of a model under a server's spelling (the
// simulator's catalogue) holds for the fleet's name of it.
func TestFleetKnowsAModelByTheCataloguesSpelling(t *testing.T) {
	f := NewFleet([]ServerConfig{
		{Config: client.Config{Name: "b", URL: "http://127.0.0.1:1/v1", Kind: "lmstudio"}, Models: []string{"pub/m"}},
		{Config: client.Config{Name: "a", URL: "http://127.0.0.1:1/v1", Kind: "ollama"}, Models: []string{"m:latest"}},
	}, Options{ProbeInterval: -1, JudgeModels: map[string]bool{"m": true},
		Models: map[string]placement.ModelView{"m:latest": {SizeGB: 7}, "pub/m": {SizeGB: 9}}})
	defer f.Close()
	f.mu.Lock()
	got := f.models["m"].SizeGB
	f.mu.Unlock()
	if got != 7 {
		t.Errorf("m is %g GB, want 7: server a's spelling, the first server by name", got)
	}
}

func TestFleetSendAsNamesTheModelAsTheServerListsIt(t *testing.T) {
	f := NewFleet([]ServerConfig{
		{Config: client.Config{Name: "api", URL: "http://127.0.0.1:1/v1", Kind: "openai"}, Models: []string{"gpt-x-mini"}},
		{Config: client.Config{Name: "unknown", URL: "http://127.0.0.1:1/v1", Kind: "openai"}},
	}, Options{ProbeInterval: -1})
	defer f.Close()
	for _, tc := range []struct{ server, model, want string }{
		{"api", "GPT-X-mini", "gpt-x-mini"},
		{"api", "other", "other"},
		{"unknown", "GPT-X-mini", "GPT-X-mini"},
		{"nowhere", "m", "m"},
	} {
		if got := f.SendAs(tc.server, tc.model); got != tc.want {
			t.Errorf("SendAs(%q, %q) = %q, want %q", tc.server, tc.model, got, tc.want)
		}
	}
}
