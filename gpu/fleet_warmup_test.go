package gpu

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

// oaiJITServer is a JIT server that counts warm-ups (max_tokens 1) and answers
// everything at once.
type oaiJITServer struct {
	mu      sync.Mutex
	warmups []string // models warmed up, in order
	jobs    []string
}

func (j *oaiJITServer) handler(w http.ResponseWriter, r *http.Request) {
	body := oaitest.Decode(r)
	j.mu.Lock()
	if body.MaxTokens == 1 {
		j.warmups = append(j.warmups, body.Model)
	} else {
		j.jobs = append(j.jobs, body.Model)
	}
	j.mu.Unlock()
	oaitest.Reply(w, body.Model, "ok")
}

func (j *oaiJITServer) counts() (warmups, jobs []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.warmups), slices.Clone(j.jobs)
}

func TestFleetPrefersTheServerWhereTheModelIsResident(t *testing.T) {
	fakes := []*oaiJITServer{{}, {}}
	var cfgs []ServerConfig
	for i, fk := range fakes {
		srv := oaitest.Server(t, fk.handler)
		cfgs = append(cfgs, ServerConfig{
			Config: client.Config{Name: fmt.Sprint("gpu", i), URL: srv.URL + "/v1", Kind: "lmstudio"},
			Slots:  1,
			Models: []string{"a", "b"},
		})
	}
	var mu sync.Mutex
	var reported []string
	f := NewFleet(cfgs, Options{Warmup: func(server, model string) func(chat.Result, error) {
		return func(res chat.Result, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, fmt.Sprintf("%s/%s err=%v", server, model, err))
		}
	}})
	defer f.Close()

	run := func(model, pin string) string {
		tj := trackJob(model, "q")
		tj.job.Pin = pin
		f.Submit(context.Background(), tj.job)
		wantOK(t, tj.wait(t))
		return <-tj.dispatched
	}
	if s := run("a", "gpu1"); s != "gpu1" {
		t.Fatalf("pinned job ran on %s", s)
	}
	// gpu0 comes first and is free, but gpu1 has "a" loaded.
	if s := run("a", ""); s != "gpu1" {
		t.Errorf("a job for a resident model ran on %s, want gpu1 where it is loaded", s)
	}
	if s := run("b", ""); s != "gpu0" {
		t.Errorf("a job for a model loaded nowhere ran on %s, want the first free server gpu0", s)
	}

	w0, j0 := fakes[0].counts()
	w1, j1 := fakes[1].counts()
	if !slices.Equal(w0, []string{"b"}) || !slices.Equal(w1, []string{"a"}) {
		t.Errorf("warm-ups: gpu0 %v, gpu1 %v; want [b] and [a]: one per load, none for a resident model", w0, w1)
	}
	if !slices.Equal(j0, []string{"b"}) || !slices.Equal(j1, []string{"a", "a"}) {
		t.Errorf("jobs: gpu0 %v, gpu1 %v", j0, j1)
	}
	mu.Lock()
	if want := []string{"gpu1/a err=<nil>", "gpu0/b err=<nil>"}; !slices.Equal(reported, want) {
		t.Errorf("Warmup hook reported %v, want %v", reported, want)
	}
	mu.Unlock()
	st := f.State()
	if !slices.Equal(st[0].Resident, []string{"b"}) || !slices.Equal(st[1].Resident, []string{"a"}) {
		t.Errorf("resident: gpu0 %v, gpu1 %v; want [b], [a]", st[0].Resident, st[1].Resident)
	}
}

func TestFleetWarmsUpOnlyServersThatLoadOnDemand(t *testing.T) {
	for _, tc := range []struct {
		kind    chat.Kind
		warmups int
	}{{"lmstudio", 1}, {"ollama", 1}, {"llamacpp", 1}, {"sim", 1}, {"vllm", 0}, {"openai", 0}, {"", 0}} {
		t.Run("kind="+string(tc.kind), func(t *testing.T) {
			fk := &oaiJITServer{}
			srv := oaitest.Server(t, fk.handler)
			f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: tc.kind}, Slots: 1, Models: []string{"a"}}}, Options{})
			defer f.Close()
			for i := range 2 {
				tj := trackJob("a", fmt.Sprint(i))
				f.Submit(context.Background(), tj.job)
				wantOK(t, tj.wait(t))
			}
			if w, _ := fk.counts(); len(w) != tc.warmups {
				t.Errorf("%d warm-ups for two jobs of one model, want %d", len(w), tc.warmups)
			}
		})
	}
}

func TestFleetModelServedAfterAFailedWarmupIsResident(t *testing.T) {
	var warmups atomic.Int32
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		if body.MaxTokens == 1 {
			warmups.Add(1)
			oaitest.Error(500, "application/json", `{"error":{"message":"warm-up refused"}}`)(w, r)
			return
		}
		oaitest.Reply(w, body.Model, "ok")
	})
	var reported atomic.Value
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "llamacpp"}, Slots: 1, Models: []string{"a"}}},
		Options{Warmup: func(server, model string) func(chat.Result, error) {
			return func(_ chat.Result, err error) { reported.Store(chat.ClassOf(err)) }
		}})
	defer f.Close()
	for i := range 2 {
		tj := trackJob("a", fmt.Sprint(i))
		f.Submit(context.Background(), tj.job)
		wantOK(t, tj.wait(t))
	}
	if n := warmups.Load(); n != 1 {
		t.Errorf("%d warm-ups; want 1: the first job's answer shows the model is loaded", n)
	}
	if got := reported.Load(); got != chat.ClassHTTP5xx {
		t.Errorf("Warmup hook got class %v, want http_5xx", got)
	}
}

func TestFleetJobsWaitForALoadInProgress(t *testing.T) {
	warmArrived, warmRelease := make(chan struct{}), make(chan struct{})
	var loaded atomic.Bool
	var warmups, early atomic.Int32
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		if body.MaxTokens == 1 {
			warmups.Add(1)
			close(warmArrived)
			<-warmRelease
			loaded.Store(true)
		} else if !loaded.Load() {
			early.Add(1)
		}
		oaitest.Reply(w, body.Model, "ok")
	})
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "ollama"}, Slots: 2, Models: []string{"a"}}}, Options{})
	defer f.Close()
	j1, j2 := trackJob("a", "1"), trackJob("a", "2")
	f.Submit(context.Background(), j1.job)
	f.Submit(context.Background(), j2.job)
	<-warmArrived
	if st := f.State()[0]; st.Loading != "a" {
		t.Errorf("during the warm-up State().Loading = %q, want a", st.Loading)
	}
	close(warmRelease)
	wantOK(t, j1.wait(t))
	wantOK(t, j2.wait(t))
	if warmups.Load() != 1 || early.Load() != 0 {
		t.Errorf("%d warm-ups, %d jobs sent before the load ended; want 1 and 0", warmups.Load(), early.Load())
	}
}
