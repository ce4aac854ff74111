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
)

// outcome is one call of a job's Done.
type outcome struct {
	res Result
	err error
}

// tracked is a job whose Done and Dispatched calls the test can wait on and count.
type tracked struct {
	job        *Job
	done       chan outcome // receives the first Done
	calls      atomic.Int32
	dispatched chan string
}

func track(model, content string) *tracked {
	tj := &tracked{done: make(chan outcome, 1), dispatched: make(chan string, 1)}
	tj.job = &Job{
		Request:    Request{Model: model, Messages: []Message{{Role: "user", Content: content}}},
		Purpose:    PurposeInference,
		Dispatched: func(server string) { tj.dispatched <- server },
		Done: func(res Result, err error) {
			if tj.calls.Add(1) == 1 {
				tj.done <- outcome{res, err}
			}
		},
	}
	return tj
}

// wait returns the job's outcome, failing the test if it takes unreasonably long
// (a hang is a bug; no test depends on this bound for correctness).
func (tj *tracked) wait(t *testing.T) outcome {
	t.Helper()
	select {
	case o := <-tj.done:
		return o
	case <-time.After(20 * time.Second):
		t.Fatalf("job %s never finished", tj.job.Request.Messages[0].Content)
		return outcome{}
	}
}

// pending reports whether Done has not been called.
func (tj *tracked) pending() bool { return tj.calls.Load() == 0 }

func wantClass(t *testing.T, o outcome, class ErrorClass) {
	t.Helper()
	if got := ClassOf(o.err); got != class {
		t.Errorf("Done error %v: class %q, want %q", o.err, got, class)
	}
}

func wantOK(t *testing.T, o outcome) {
	t.Helper()
	if o.err != nil {
		t.Errorf("Done error %v, want success", o.err)
	}
}

// greedy is a policy that puts every queued job on the first server that
// offers its model, slots or not: the fleet must refuse the excess.
var greedy = PolicyFunc(func(v FleetView) []Assignment {
	var out []Assignment
	for _, j := range v.Queue {
		for _, s := range v.Servers {
			if s.Offered[j.Model] {
				out = append(out, Assignment{Job: j.ID, Server: s.Name})
				break
			}
		}
	}
	return out
})

func TestFleetNeverExceedsAServersSlots(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy Policy
	}{{"first fit", FirstFit}, {"a policy that over-assigns", greedy}} {
		t.Run(tc.name, func(t *testing.T) {
			var inflight, peak atomic.Int32
			arrived := make(chan struct{}, 16)
			release := make(chan struct{})
			srv := oaiServer(t, func(w http.ResponseWriter, r *http.Request) {
				body := oaiDecode(r)
				n := inflight.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				arrived <- struct{}{}
				<-release
				// Down before the reply: the fleet frees the slot only after it.
				inflight.Add(-1)
				oaiReply(w, body.Model, "ok")
			})
			f := NewFleet([]ServerConfig{{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm", Slots: 2, Models: []string{"m"}}},
				Options{Policy: tc.policy})
			defer f.Close()

			var jobs []*tracked
			for i := range 6 {
				tj := track("m", fmt.Sprint("job", i))
				jobs = append(jobs, tj)
				f.Submit(context.Background(), tj.job)
			}
			<-arrived
			<-arrived
			st := f.State()[0]
			if st.Busy != 2 || st.Queue != 4 || st.Slots != 2 {
				t.Errorf("with both slots held: busy %d, queue %d, slots %d; want 2, 4, 2", st.Busy, st.Queue, st.Slots)
			}
			for range jobs {
				release <- struct{}{}
			}
			for _, tj := range jobs {
				wantOK(t, tj.wait(t))
			}
			if p := peak.Load(); p != 2 {
				t.Errorf("the server saw at most %d requests at once, want exactly its 2 slots", p)
			}
		})
	}
}

func TestFleetCountsTheTimeoutFromDispatchNotEnqueue(t *testing.T) {
	srv := oaiServer(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaiDecode(r)
		if body.Messages[0].Content == "hang" {
			<-r.Context().Done() // the body is read: the server notices the client leave
			return
		}
		oaiReply(w, body.Model, "ok")
	})
	f := NewFleet([]ServerConfig{{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm", Slots: 1, Models: []string{"m"}}}, Options{})
	defer f.Close()

	// Each job may take 300ms from dispatch. The first holds the only slot
	// for all of that, so the others wait in the queue longer than their
	// own timeout: counted from enqueue, they would fail on dispatch.
	const timeout = 300 * time.Millisecond
	hang, quick1, quick2 := track("m", "hang"), track("m", "quick1"), track("m", "quick2")
	for _, tj := range []*tracked{hang, quick1, quick2} {
		tj.job.Timeout = timeout
		f.Submit(context.Background(), tj.job)
	}
	o := hang.wait(t)
	wantClass(t, o, ClassTimeout)
	for _, tj := range []*tracked{quick1, quick2} {
		wantOK(t, tj.wait(t))
		if s := <-tj.dispatched; s != "gpu0" {
			t.Errorf("Dispatched(%q), want gpu0", s)
		}
	}
}

// jitFake is a JIT server that counts warm-ups (max_tokens 1) and answers
// everything at once.
type jitFake struct {
	mu      sync.Mutex
	warmups []string // models warmed up, in order
	jobs    []string
}

func (j *jitFake) handler(w http.ResponseWriter, r *http.Request) {
	body := oaiDecode(r)
	j.mu.Lock()
	if body.MaxTokens == 1 {
		j.warmups = append(j.warmups, body.Model)
	} else {
		j.jobs = append(j.jobs, body.Model)
	}
	j.mu.Unlock()
	oaiReply(w, body.Model, "ok")
}

func (j *jitFake) counts() (warmups, jobs []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.warmups), slices.Clone(j.jobs)
}

func TestFleetPrefersTheServerWhereTheModelIsResident(t *testing.T) {
	fakes := []*jitFake{{}, {}}
	var cfgs []ServerConfig
	for i, fk := range fakes {
		srv := oaiServer(t, fk.handler)
		cfgs = append(cfgs, ServerConfig{Name: fmt.Sprint("gpu", i), URL: srv.URL + "/v1", Kind: "lmstudio", Slots: 1,
			Models: []string{"a", "b"}})
	}
	var mu sync.Mutex
	var reported []string
	f := NewFleet(cfgs, Options{Warmup: func(server, model string) func(Result, error) {
		return func(res Result, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, fmt.Sprintf("%s/%s err=%v", server, model, err))
		}
	}})
	defer f.Close()

	run := func(model, pin string) string {
		tj := track(model, "q")
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
		kind    string
		warmups int
	}{{"lmstudio", 1}, {"ollama", 1}, {"llamacpp", 1}, {"sim", 1}, {"vllm", 0}, {"openai", 0}, {"", 0}} {
		t.Run("kind="+tc.kind, func(t *testing.T) {
			fk := &jitFake{}
			srv := oaiServer(t, fk.handler)
			f := NewFleet([]ServerConfig{{Name: "gpu0", URL: srv.URL + "/v1", Kind: tc.kind, Slots: 1, Models: []string{"a"}}}, Options{})
			defer f.Close()
			for i := range 2 {
				tj := track("a", fmt.Sprint(i))
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
	srv := oaiServer(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaiDecode(r)
		if body.MaxTokens == 1 {
			warmups.Add(1)
			errorBody(500, "application/json", `{"error":{"message":"warm-up refused"}}`)(w, r)
			return
		}
		oaiReply(w, body.Model, "ok")
	})
	var reported atomic.Value
	f := NewFleet([]ServerConfig{{Name: "gpu0", URL: srv.URL + "/v1", Kind: "llamacpp", Slots: 1, Models: []string{"a"}}},
		Options{Warmup: func(server, model string) func(Result, error) {
			return func(_ Result, err error) { reported.Store(ClassOf(err)) }
		}})
	defer f.Close()
	for i := range 2 {
		tj := track("a", fmt.Sprint(i))
		f.Submit(context.Background(), tj.job)
		wantOK(t, tj.wait(t))
	}
	if n := warmups.Load(); n != 1 {
		t.Errorf("%d warm-ups; want 1: the first job's answer shows the model is loaded", n)
	}
	if got := reported.Load(); got != ClassHTTP5xx {
		t.Errorf("Warmup hook got class %v, want http_5xx", got)
	}
}

func TestFleetJobsWaitForALoadInProgress(t *testing.T) {
	warmArrived, warmRelease := make(chan struct{}), make(chan struct{})
	var loaded atomic.Bool
	var warmups, early atomic.Int32
	srv := oaiServer(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaiDecode(r)
		if body.MaxTokens == 1 {
			warmups.Add(1)
			close(warmArrived)
			<-warmRelease
			loaded.Store(true)
		} else if !loaded.Load() {
			early.Add(1)
		}
		oaiReply(w, body.Model, "ok")
	})
	f := NewFleet([]ServerConfig{{Name: "gpu0", URL: srv.URL + "/v1", Kind: "ollama", Slots: 2, Models: []string{"a"}}}, Options{})
	defer f.Close()
	j1, j2 := track("a", "1"), track("a", "2")
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

// hangFake holds every request open until the client leaves, and says
// when each one arrives.
func hangFake(t *testing.T) (srvURL string, arrived chan string, count *atomic.Int32) {
	arrived = make(chan string, 16)
	count = &atomic.Int32{}
	srv := oaiServer(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaiDecode(r)
		count.Add(1)
		arrived <- body.Messages[0].Content
		<-r.Context().Done()
	})
	return srv.URL + "/v1", arrived, count
}

func TestFleetCancelWhileQueuedAndInFlight(t *testing.T) {
	url, arrived, count := hangFake(t)
	f := NewFleet([]ServerConfig{{Name: "gpu0", URL: url, Kind: "vllm", Slots: 1, Models: []string{"m"}}}, Options{})

	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelA()
	a, b := track("m", "A"), track("m", "B")
	a.job.Timeout = time.Hour
	f.Submit(ctxA, a.job)
	f.Submit(ctxB, b.job)
	if got := <-arrived; got != "A" {
		t.Fatalf("first request %q, want A", got)
	}

	cancelB()
	ob := b.wait(t)
	wantClass(t, ob, ClassCanceled)
	if !strings.Contains(ob.err.Error(), "queued") {
		t.Errorf("queued cancel says %q; want it to say it was queued", ob.err)
	}
	if st := f.State()[0]; st.Queue != 0 || st.Busy != 1 {
		t.Errorf("after cancelling the queued job: queue %d, busy %d; want 0, 1", st.Queue, st.Busy)
	}

	cancelA()
	oa := a.wait(t)
	wantClass(t, oa, ClassCanceled)
	if oa.res.Server != "gpu0" {
		t.Errorf("in-flight cancel: Result.Server = %q, want gpu0", oa.res.Server)
	}
	f.Close()
	if n := count.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1 (the cancelled queued job is never sent)", n)
	}
	if a.calls.Load() != 1 || b.calls.Load() != 1 {
		t.Errorf("Done calls: A %d, B %d; want 1 each", a.calls.Load(), b.calls.Load())
	}
	noLeakedGoroutines(t)
}

func TestFleetCloseCancelsEverything(t *testing.T) {
	url, arrived, _ := hangFake(t)
	f := NewFleet([]ServerConfig{{Name: "gpu0", URL: url, Kind: "lmstudio", Slots: 1, Models: []string{"m"}}}, Options{})
	var jobs []*tracked
	for i := range 3 {
		tj := track("m", fmt.Sprint(i))
		jobs = append(jobs, tj)
		f.Submit(context.Background(), tj.job)
	}
	<-arrived // the first job's warm-up holds the slot; the rest queue
	f.Close()
	for _, tj := range jobs {
		if tj.pending() {
			t.Fatalf("Close returned before job %s was done", tj.job.Request.Messages[0].Content)
		}
		wantClass(t, tj.wait(t), ClassCanceled)
	}
	late := track("m", "late")
	f.Submit(context.Background(), late.job)
	if late.pending() {
		t.Fatal("Submit after Close did not finish the job at once")
	}
	wantClass(t, late.wait(t), ClassCanceled)
	f.Close() // twice is fine
	noLeakedGoroutines(t)
}

func TestFleetCallsDoneExactlyOnce(t *testing.T) {
	srv := oaiServer(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaiDecode(r)
		if strings.HasPrefix(body.Messages[0].Content, "hang") {
			<-r.Context().Done()
			return
		}
		oaiReply(w, body.Model, "ok")
	})
	servers := []ServerConfig{
		{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm", Slots: 2, Models: []string{"m"}},
		{Name: "gpu1", URL: srv.URL + "/v1", Kind: "ollama", Slots: 2, Models: []string{"m", "n"}},
	}
	f := NewFleet(servers, Options{})
	var jobs []*tracked
	var cancels []context.CancelFunc
	firstDone := make(chan struct{})
	var once sync.Once
	for i := range 120 {
		content := fmt.Sprint("job", i)
		if i%7 == 0 {
			content = fmt.Sprint("hang", i)
		}
		tj := track([]string{"m", "n"}[i%2], content)
		inner := tj.job.Done
		tj.job.Done = func(res Result, err error) {
			inner(res, err)
			once.Do(func() { close(firstDone) })
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		switch i % 5 {
		case 1:
			cancel() // cancelled before it is submitted
		case 2:
			// cancelled the moment it is dispatched
			tj.job.Dispatched = func(string) { cancel() }
		case 3:
			tj.job.Timeout = time.Nanosecond
		}
		jobs = append(jobs, tj)
		f.Submit(ctx, tj.job)
		if i%4 == 0 {
			go cancel() // cancelled at some moment
		}
	}
	<-firstDone
	f.Close()
	for i, tj := range jobs {
		if n := tj.calls.Load(); n != 1 {
			t.Errorf("job %d: Done called %d times after Close, want 1", i, n)
		}
	}
	for _, c := range cancels {
		c()
	}
	noLeakedGoroutines(t)
}

func TestFleetRejectsJobsNoServerCanRun(t *testing.T) {
	srv := oaiServer(t, nil, "a")
	known := ServerConfig{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm", Slots: 1, Models: []string{"a"}}
	tests := []struct {
		name, model, pin, want string
	}{
		{"a model no server offers", "zzz", "", `no configured server offers model "zzz"`},
		{"a pin to no server", "a", "gpu9", `no server is named "gpu9"`},
		{"a pin to a server without the model", "zzz", "gpu0", `server gpu0 does not offer model "zzz"`},
		{"no model", "", "", "names no model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFleet([]ServerConfig{known}, Options{})
			defer f.Close()
			tj := track(tt.model, "q")
			tj.job.Pin = tt.pin
			f.Submit(context.Background(), tj.job)
			if tj.pending() {
				t.Fatal("Submit did not finish a job that can never run")
			}
			o := tj.wait(t)
			wantClass(t, o, ClassHTTP4xx)
			if !strings.Contains(o.err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", o.err, tt.want)
			}
		})
	}
}

func TestFleetJobForAnUnlistedModelWaitsForDiscover(t *testing.T) {
	srv := oaiServer(t, func(w http.ResponseWriter, r *http.Request) { oaiReply(w, oaiDecode(r).Model, "ok") }, "a", "b")
	f := NewFleet([]ServerConfig{{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm", Slots: 1}}, Options{})
	defer f.Close()
	known, unknown := track("a", "1"), track("zzz", "2")
	f.Submit(context.Background(), known.job)
	f.Submit(context.Background(), unknown.job)
	if !known.pending() || !unknown.pending() {
		t.Fatal("jobs finished before the server's models were known")
	}
	if errs := f.Discover(context.Background()); len(errs) != 0 {
		t.Fatalf("Discover: %v", errs)
	}
	if got := f.Offered(); !slices.Equal(got["gpu0"], []string{"a", "b"}) {
		t.Errorf("Offered = %v", got)
	}
	wantOK(t, known.wait(t))
	wantClass(t, unknown.wait(t), ClassHTTP4xx)
}

func TestFleetMarksAServerDownAndBringsItBack(t *testing.T) {
	var requests atomic.Int32
	var healthy atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body := oaiDecode(r)
		requests.Add(1)
		if !healthy.Load() {
			errorBody(503, "application/json", `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)(w, r)
			return
		}
		oaiReply(w, body.Model, "ok")
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			errorBody(503, "application/json", `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)(w, r)
			return
		}
		oaiModels(w, "m")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := NewFleet([]ServerConfig{{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm", Slots: 1, Models: []string{"m"}}}, Options{})
	defer f.Close()

	for i := range downAfter {
		if st := f.State()[0]; !st.Up {
			t.Fatalf("down after %d unavailable answers, want %d", i, downAfter)
		}
		tj := track("m", fmt.Sprint(i))
		f.Submit(context.Background(), tj.job)
		wantClass(t, tj.wait(t), ClassUnavailable)
	}
	st := f.State()[0]
	if st.Up || !strings.Contains(st.DownReason, "Loading model") {
		t.Fatalf("after %d unavailable answers: up %v, reason %q", downAfter, st.Up, st.DownReason)
	}

	waiting := track("m", "waiting")
	f.Submit(context.Background(), waiting.job)
	if errs := f.Discover(context.Background()); errs["gpu0"] == nil {
		t.Errorf("Discover of a server still failing: errors %v", errs)
	}
	if st := f.State()[0]; st.Up || st.Queue != 1 || !waiting.pending() {
		t.Errorf("while down: up %v, queue %d, job pending %v; want false, 1, true", st.Up, st.Queue, waiting.pending())
	}

	healthy.Store(true)
	if errs := f.Discover(context.Background()); len(errs) != 0 {
		t.Fatalf("Discover: %v", errs)
	}
	wantOK(t, waiting.wait(t))
	if st := f.State()[0]; !st.Up || st.DownReason != "" {
		t.Errorf("after a good Discover: up %v, reason %q", st.Up, st.DownReason)
	}
	if n := requests.Load(); n != downAfter+1 {
		t.Errorf("%d chat requests, want %d: none while the server was down", n, downAfter+1)
	}
}

func TestFleetDiscoverReportsUnreachableServers(t *testing.T) {
	srv := oaiServer(t, nil, "qwen3-8b")
	f := NewFleet([]ServerConfig{
		{Name: "up", URL: srv.URL + "/v1", Kind: "lmstudio", Slots: 2},
		{Name: "gone", URL: closedURL(t), Kind: "ollama", Slots: 1},
	}, Options{})
	defer f.Close()
	errs := f.Discover(context.Background())
	if len(errs) != 1 || ClassOf(errs["gone"]) != ClassUnavailable {
		t.Errorf("Discover errors %v, want one unavailable error for gone", errs)
	}
	if got := f.Offered(); len(got) != 1 || !slices.Equal(got["up"], []string{"qwen3-8b"}) {
		t.Errorf("Offered = %v", got)
	}
	st := f.State()
	if !st[0].Up || st[1].Up || st[1].DownReason == "" {
		t.Errorf("State: up %v / %v (reason %q); want the unreachable one down with a reason", st[0].Up, st[1].Up, st[1].DownReason)
	}
}

func TestServerHealth(t *testing.T) {
	unavailable := &Error{Class: ClassUnavailable, Message: "connection refused"}
	tests := []struct {
		name    string
		errs    []error
		wantUp  bool
		changed bool // on the last outcome
	}{
		{"two unavailable answers leave it up", []error{unavailable, unavailable}, true, false},
		{"three in a row take it down", []error{unavailable, unavailable, unavailable}, false, true},
		{"an answer in between resets the count", []error{unavailable, unavailable, &Error{Class: ClassHTTP4xx}, unavailable, unavailable}, true, false},
		{"timeouts neither count nor reset", []error{unavailable, &Error{Class: ClassTimeout}, unavailable, unavailable}, false, true},
		{"a success brings it back", []error{unavailable, unavailable, unavailable, nil}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(ServerConfig{Name: "gpu0", Slots: 1}, nil)
			var changed bool
			for _, err := range tt.errs {
				changed = s.observe(err)
			}
			if s.up != tt.wantUp || changed != tt.changed {
				t.Errorf("up %v changed %v, want %v %v", s.up, changed, tt.wantUp, tt.changed)
			}
		})
	}
}

func TestMovingAverage(t *testing.T) {
	avg := 0.0
	for _, x := range []float64{100, 0, 200} {
		avg = movingAvg(avg, x)
	}
	if want := tpsAlpha*200 + (1-tpsAlpha)*100; avg != want {
		t.Errorf("average %v, want %v (first sample taken whole, zero samples ignored)", avg, want)
	}
}

func TestSlotChoiceKeepsTheResidentSetStable(t *testing.T) {
	s := newServer(ServerConfig{Name: "gpu0", Kind: "lmstudio", Slots: 3}, nil)
	s.slots[0].served, s.slots[1].served, s.slots[2].served = "a", "b", "b"
	if i := s.acquire("b"); s.slots[i].served != "b" {
		t.Errorf("a job for b took slot %d (served %q), want a slot that served b", i, s.slots[i].served)
	}
	if i := s.acquire("c"); i != 2 {
		t.Errorf("a job for c took slot %d, want slot 2, whose b another slot holds, so that a stays resident", i)
	}
}
