package sim

import (
	"context"
	"math"
	"net/http"
	"pitwall/gpu/simspec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestStartRejectsConfigsWithWhatToChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no models", Config{Name: "x"}, "no models offered"},
		{"unknown backend", Config{Models: []string{"m"}, Spec: simspec.Server{Backend: "tgi"}}, `unknown backend "tgi"`},
		{"preload not offered", Config{Models: []string{"m"}, Spec: simspec.Server{Preload: []string{"n"}}}, `preload model "n" is not among`},
		{"model too big", Config{Models: []string{"m"}, Spec: simspec.Server{Backend: BackendLMStudio},
			Catalog: map[string]simspec.Model{"m": {SizeGB: 80}}}, "takes 80.0 GB but the server has 24.0 GB"},
		{"vllm models do not fit together", Config{Models: []string{"a", "b"}, Spec: simspec.Server{Backend: BackendVLLM},
			Catalog: map[string]simspec.Model{"a": {SizeGB: 16}, "b": {SizeGB: 16}}}, "vllm keeps every offered model resident"},
		{"model twice", Config{Models: []string{"m", "m"}}, `model "m" offered twice`},
		{"address taken", Config{Models: []string{"m"}, Addr: "127.0.0.1:-1"}, "listen on"},
		{"negative time scale", Config{Models: []string{"m"}, TimeScale: -1}, "time scale -1 is not a number >= 0"},
		{"time scale not a number", Config{Models: []string{"m"}, TimeScale: math.NaN()}, "time scale NaN is not a number >= 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(tc.cfg)
			if err == nil {
				s.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestURLAndFixedAddress(t *testing.T) {
	s := start(t, instant("m"))
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/v1") {
		t.Errorf("URL %s", s.URL())
	}
	addr := s.Addr()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := instant("m")
	cfg.Addr = addr
	again := start(t, cfg)
	if again.Addr() != addr {
		t.Errorf("fixed address %s, listening on %s", addr, again.Addr())
	}
}

func TestCloseEndsInFlightRequestsAndLeavesNoGoroutine(t *testing.T) {
	base := runtime.NumGoroutine()
	cfg := Config{Name: "t", Models: []string{"m"}, Slots: 2, TimeScale: 1,
		Catalog: map[string]simspec.Model{"m": {TTFT: time.Nanosecond, TokensPerSec: 1e-6}}} // streams until stopped
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	c := &http.Client{Transport: tr}
	var releases []func()
	for range 3 { // two decoding, one queued
		releases = append(releases, hold(t, c, s, body("m", "hi", map[string]any{"stream": true})))
	}
	waitState(t, s, "two decoding, one queued", func(st State) bool { return st.Decoding == 2 && st.Queue == 1 })

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, r := range releases {
		r() // returns only once its request has ended
	}
	if _, err := c.Get(s.URL() + "/models"); err == nil {
		t.Error("a closed server answered")
	}
	if err := s.Restart(); err == nil {
		t.Error("Restart after Close did not fail")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	tr.CloseIdleConnections()
	// A goroutine's exit sends no event to wait on: poll, as goleak does.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

func TestStartFleet(t *testing.T) {
	f, err := StartFleet([]Config{
		{Name: "gpu0", Models: []string{"a"}, Instant: true},
		{Name: "gpu1", Models: []string{"b"}, Instant: true, Spec: simspec.Server{Backend: BackendOllama}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	servers := f.Servers()
	if len(servers) != 2 || servers[0].Name() != "gpu0" || f.Server("gpu1") != servers[1] || f.Server("nope") != nil {
		t.Fatalf("servers %v", servers)
	}
	if servers[0].URL() == servers[1].URL() {
		t.Error("two servers on one URL")
	}
	c := client(t)
	complete(t, c, servers[1], body("b", "hi", nil))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if _, err := c.Get(s.URL() + "/models"); err == nil {
			t.Errorf("%s answers after the fleet closed", s.Name())
		}
	}
}

func TestStartFleetClosesWhatItStartedOnFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second Config
		want   string
	}{
		{"bad config", Config{Name: "gpu1"}, "no models offered"},
		{"duplicate name", Config{Name: "gpu0", Models: []string{"a"}}, "used twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := start(t, instant("a"))
			addr := first.Addr()
			first.Close()
			_, err := StartFleet([]Config{{Name: "gpu0", Models: []string{"a"}, Addr: addr, Instant: true}, tc.second})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			// The first server was closed: its fixed address is free again.
			cfg := instant("a")
			cfg.Addr = addr
			start(t, cfg)
		})
	}
}

// time_scale = 0 means instant wherever it is read: a load of hours, a
// first token after an hour and a token a minute answer at once.
func TestTimeScaleZeroMakesEveryDelayZero(t *testing.T) {
	for _, backend := range []string{BackendLMStudio, BackendOllama} {
		t.Run(backend, func(t *testing.T) {
			cfg := Config{Name: "t", Models: []string{"m"}, TimeScale: 0,
				Spec:    simspec.Server{Backend: backend, LoadGBps: 1e-3},
				Catalog: map[string]simspec.Model{"m": {TTFT: time.Hour, TokensPerSec: 1.0 / 60}}}
			s := start(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := postCtx(ctx, client(t), s, body("m", "hi", nil)); err != nil {
				t.Fatalf("a request under time scale 0 did not end at once: %v", err)
			}
			if st := s.Stats(); st.Served["m"] != 1 || st.Loads["m"] != 1 {
				t.Errorf("stats %+v", st)
			}
			// Under instant a model never expires: Ollama's keep-alive is a
			// retention, and a zero one would unload every model at once.
			if got := s.State().Resident; len(got) != 1 {
				t.Errorf("resident %v after the request", got)
			}
		})
	}
}
