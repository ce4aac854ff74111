package gpu

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

func TestFleetRejectsJobsNoServerCanRun(t *testing.T) {
	srv := oaitest.Server(t, nil, "a")
	known := ServerConfig{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1, Models: []string{"a"}}
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
			tj := trackJob(tt.model, "q")
			tj.job.Pin = tt.pin
			f.Submit(context.Background(), tj.job)
			if tj.pending() {
				t.Fatal("Submit did not finish a job that can never run")
			}
			o := tj.wait(t)
			wantClass(t, o, chat.ClassHTTP4xx)
			if !strings.Contains(o.err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", o.err, tt.want)
			}
		})
	}
}

func TestFleetJobForAnUnlistedModelWaitsForDiscover(t *testing.T) {
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) { oaitest.Reply(w, oaitest.Decode(r).Model, "ok") }, "a", "b")
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1}}, Options{})
	defer f.Close()
	known, unknown := trackJob("a", "1"), trackJob("zzz", "2")
	f.Submit(context.Background(), known.job)
	f.Submit(context.Background(), unknown.job)
	if !known.pending() || !unknown.pending() {
		t.Fatal("jobs finished before the server's models were known")
	}
	if errs := f.Discover(context.Background()); len(errs) != 1 || errs["gpu0"] != nil {
		t.Fatalf("Discover: %v, want gpu0: nil", errs)
	}
	if got := f.Offered(); !slices.Equal(got["gpu0"], []string{"a", "b"}) {
		t.Errorf("Offered = %v", got)
	}
	wantOK(t, known.wait(t))
	wantClass(t, unknown.wait(t), chat.ClassHTTP4xx)
}

func TestFleetMarksAServerDownAndBringsItBack(t *testing.T) {
	var requests atomic.Int32
	var healthy, listing atomic.Bool
	// /v1/models answers while chat fails at first, so the check after the
	// first failed requests leaves the server up: the three-strikes rule decides.
	listing.Store(true)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		if n := requests.Add(1); n >= downAfter {
			listing.Store(false) // from the third strike on, nothing answers
		}
		if !healthy.Load() {
			oaitest.Error(503, "application/json", `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)(w, r)
			return
		}
		oaitest.Reply(w, body.Model, "ok")
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if !listing.Load() {
			oaitest.Error(503, "application/json", `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)(w, r)
			return
		}
		oaitest.Models(w, "m")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1, Models: []string{"m"}}}, Options{})
	defer f.Close()

	for i := range downAfter {
		if st := f.State()[0]; !st.Up {
			t.Fatalf("down after %d unavailable answers, want %d", i, downAfter)
		}
		tj := trackJob("m", fmt.Sprint(i))
		f.Submit(context.Background(), tj.job)
		wantClass(t, tj.wait(t), chat.ClassUnavailable)
	}
	st := f.State()[0]
	// Down by the third strike or by the check that follows it.
	if st.Up || !(strings.Contains(st.DownReason, "Loading model") || strings.Contains(st.DownReason, "503")) {
		t.Fatalf("after %d unavailable answers: up %v, reason %q", downAfter, st.Up, st.DownReason)
	}

	waiting := trackJob("m", "waiting")
	f.Submit(context.Background(), waiting.job)
	if errs := f.Discover(context.Background()); errs["gpu0"] == nil {
		t.Errorf("Discover of a server still failing: errors %v", errs)
	}
	if st := f.State()[0]; st.Up || st.Queue != 1 || !waiting.pending() {
		t.Errorf("while down: up %v, queue %d, job pending %v; want false, 1, true", st.Up, st.Queue, waiting.pending())
	}

	healthy.Store(true)
	listing.Store(true)
	if errs := f.Discover(context.Background()); errs["gpu0"] != nil {
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

func TestFleetDiscoverReportsEachServer(t *testing.T) {
	srv := oaitest.Server(t, nil, "qwen3-8b")
	noList := httptest.NewServer(http.NotFoundHandler()) // a hosted API that lists no models
	t.Cleanup(noList.Close)
	f := NewFleet([]ServerConfig{
		{Config: client.Config{Name: "up", URL: srv.URL + "/v1", Kind: "lmstudio"}, Slots: 2},
		{Config: client.Config{Name: "gone", URL: oaitest.ClosedURL(t), Kind: "ollama"}, Slots: 1},
		{Config: client.Config{Name: "hosted", URL: noList.URL + "/v1", Kind: "openai"}, Slots: 4, Models: []string{"gpt-judge"}},
		{Config: client.Config{Name: "unlisted", URL: noList.URL + "/v1", Kind: "vllm"}, Slots: 1},
	}, Options{})
	defer f.Close()
	errs := f.Discover(context.Background())
	if len(errs) != 4 || errs["up"] != nil || errs["hosted"] != nil ||
		chat.ClassOf(errs["gone"]) != chat.ClassUnavailable || chat.ClassOf(errs["unlisted"]) != chat.ClassHTTP4xx {
		t.Errorf("Discover = %v; want up and hosted nil, gone unavailable, unlisted http_4xx", errs)
	}
	want := map[string][]string{"up": {"qwen3-8b"}, "hosted": {"gpt-judge"}}
	if got := f.Offered(); !reflect.DeepEqual(got, want) {
		t.Errorf("Offered = %v, want %v", got, want)
	}
	for _, st := range f.State() {
		wantUp := st.Name == "up" || st.Name == "hosted"
		if st.Up != wantUp || (st.DownReason == "") != wantUp {
			t.Errorf("%s: up %v (reason %q), want up %v", st.Name, st.Up, st.DownReason, wantUp)
		}
	}
}

func TestFleetDiscoverCancelledLeavesServersAlone(t *testing.T) {
	srv := oaitest.Server(t, nil, "a")
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1}}, Options{})
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if errs := f.Discover(ctx); chat.ClassOf(errs["gpu0"]) != chat.ClassCanceled {
		t.Errorf("Discover with a cancelled context = %v, want cancelled", errs)
	}
	if st := f.State()[0]; !st.Up {
		t.Errorf("a cancelled Discover marked the server down: %q", st.DownReason)
	}
}

func TestServerHealth(t *testing.T) {
	unavailable := &chat.Error{Class: chat.ClassUnavailable, Message: "connection refused"}
	tests := []struct {
		name    string
		errs    []error
		wantUp  bool
		changed bool // on the last outcome
	}{
		{"two unavailable answers leave it up", []error{unavailable, unavailable}, true, false},
		{"three in a row take it down", []error{unavailable, unavailable, unavailable}, false, true},
		{"an answer in between resets the count", []error{unavailable, unavailable, &chat.Error{Class: chat.ClassHTTP4xx}, unavailable, unavailable}, true, false},
		{"timeouts neither count nor reset", []error{unavailable, &chat.Error{Class: chat.ClassTimeout}, unavailable, unavailable}, false, true},
		{"a success brings it back", []error{unavailable, unavailable, unavailable, nil}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(ServerConfig{Config: client.Config{Name: "gpu0"}, Slots: 1}, nil)
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
	s := newServer(ServerConfig{Config: client.Config{Name: "gpu0", Kind: "lmstudio"}, Slots: 3}, nil)
	s.slots[0].served, s.slots[1].served, s.slots[2].served = "a", "b", "b"
	if i := s.acquire("b"); s.slots[i].served != "b" {
		t.Errorf("a job for b took slot %d (served %q), want a slot that served b", i, s.slots[i].served)
	}
	if i := s.acquire("c"); i != 2 {
		t.Errorf("a job for c took slot %d, want slot 2, whose b another slot holds, so that a stays resident", i)
	}
}
