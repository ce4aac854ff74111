package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"pitwall/gpu/simspec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFaultsErrorAndRateLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		faults    simspec.Faults
		cfg       func(*Config)
		status    int
		typ       string
		retry     string
		retryMS   string
		faultKind string
	}{
		{"error", simspec.Faults{ErrorRate: 1}, nil, 500, "server_error", "", "", "error"},
		{"rate limit, scaled under a second", simspec.Faults{RateLimitRate: 1, RetryAfter: 2 * time.Second},
			func(c *Config) { c.Instant, c.TimeScale = false, 0.01 }, 429, "rate_limit_error", "1", "20", "rate_limit"},
		{"rate limit, scaled over a second", simspec.Faults{RateLimitRate: 1, RetryAfter: 300 * time.Second},
			func(c *Config) { c.Instant, c.TimeScale = false, 0.01 }, 429, "rate_limit_error", "3", "3000", "rate_limit"},
		{"rate limit, instant", simspec.Faults{RateLimitRate: 1}, nil, 429, "rate_limit_error", "0", "0", "rate_limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Faults = tc.faults
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			s := start(t, cfg)
			status, h, out := post(t, client(t), s, body("m", "hi", nil))
			if status != tc.status {
				t.Fatalf("status %d: %s", status, out)
			}
			e := decodeError(t, out)
			if e.Error.Type != tc.typ {
				t.Errorf("error %s", out)
			}
			if tc.status == 500 && e.Error.Message != "simulated GPU fault" {
				t.Errorf("message %q", e.Error.Message)
			}
			if h.Get("Retry-After") != tc.retry || h.Get("retry-after-ms") != tc.retryMS {
				t.Errorf("Retry-After %q, retry-after-ms %q; want %q, %q", h.Get("Retry-After"), h.Get("retry-after-ms"), tc.retry, tc.retryMS)
			}
			if s.Stats().Faults[tc.faultKind] != 1 {
				t.Errorf("faults %v", s.Stats().Faults)
			}
		})
	}
}

func TestFaultsCutAndMalformedStreams(t *testing.T) {
	for _, tc := range []struct {
		name      string
		faults    simspec.Faults
		done      bool
		malformed bool
		eof       bool
	}{
		{"cut", simspec.Faults{CutRate: 1}, false, false, true},
		{"malformed", simspec.Faults{MalformedRate: 1}, true, true, false},
		{"none", simspec.Faults{}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Faults = tc.faults
			s := start(t, cfg)
			_, ev := streamChat(t, client(t), s, body("m", "Tell me a story.", map[string]any{"stream": true}))
			if ev.done != tc.done {
				t.Errorf("[DONE] %v, want %v", ev.done, tc.done)
			}
			if got := slices.Contains(ev.data, "{not json"); got != tc.malformed {
				t.Errorf("malformed event %v, want %v", got, tc.malformed)
			}
			if got := errors.Is(ev.err, io.ErrUnexpectedEOF); got != tc.eof {
				t.Errorf("read error %v; want a dropped connection: %v", ev.err, tc.eof)
			}
			content := 0
			for _, d := range ev.data {
				if strings.Contains(d, `"content":"`) && !strings.Contains(d, `"content":""`) {
					content++
				}
			}
			if content == 0 {
				t.Error("no content before the fault")
			}
		})
	}
}

func TestFaultsCutAndMalformedReplies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  simspec.Faults
		readErr bool
	}{
		{"cut", simspec.Faults{CutRate: 1}, true},
		{"malformed", simspec.Faults{MalformedRate: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Faults = tc.faults
			s := start(t, cfg)
			resp, err := client(t).Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(body("m", "hi", nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(resp.Body)
			if (err != nil) != tc.readErr {
				t.Errorf("read error %v, want one: %v", err, tc.readErr)
			}
			if resp.StatusCode != 200 || json.Valid(out) || len(out) == 0 {
				t.Errorf("status %d, body %q: want a 200 with broken JSON", resp.StatusCode, out)
			}
		})
	}
}

func TestFaultHangsUntilTheClientGoesAway(t *testing.T) {
	cfg := instant("m")
	cfg.Spec.Faults = simspec.Faults{HangRate: 1}
	s := start(t, cfg)
	release := hold(t, client(t), s, body("m", "hi", nil))
	defer release()
	st := waitState(t, s, "request in", func(st State) bool { return st.Requests == 1 })
	if st.InFlight != 1 || st.Busy != 0 {
		t.Errorf("hanging request: %+v", st)
	}
	release()
	waitState(t, s, "hang ended", func(st State) bool { return st.InFlight == 0 })
	if s.Stats().Faults["hang"] != 1 || s.Stats().Served["m"] != 0 {
		t.Errorf("stats %+v", s.Stats())
	}
}

func TestFaultsAreDeterministicPerRequestNumber(t *testing.T) {
	statuses := func() []int {
		cfg := instant("m")
		cfg.Seed = 42
		cfg.Spec.Faults = simspec.Faults{ErrorRate: 0.3, RateLimitRate: 0.2}
		s := start(t, cfg)
		c := client(t)
		var out []int
		for range 60 {
			st, _, _ := post(t, c, s, body("m", "hi", nil))
			out = append(out, st)
		}
		return out
	}
	a, b := statuses(), statuses()
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different faults:\n%v\n%v", a, b)
	}
	count := map[int]int{}
	for _, st := range a {
		count[st]++
	}
	if count[500] < 8 || count[500] > 28 || count[429] < 4 || count[429] > 22 || count[200] < 17 {
		t.Errorf("statuses over 60 requests at 30%% errors and 20%% rate limits: %v", count)
	}
}

func TestSetFaultsChangesFaultsAtRunTime(t *testing.T) {
	s := start(t, instant("m"))
	c := client(t)
	if st, _, _ := post(t, c, s, body("m", "hi", nil)); st != 200 {
		t.Fatalf("status %d before faults", st)
	}
	s.SetFaults(simspec.Faults{ErrorRate: 1})
	if st, _, _ := post(t, c, s, body("m", "hi", nil)); st != 500 {
		t.Errorf("status %d after SetFaults", st)
	}
}

func TestCrashAfterNRequestsThenRestartOnTheSamePort(t *testing.T) {
	cfg := instant("m")
	cfg.Spec.Faults = simspec.Faults{CrashAfter: 2, RestartAfter: time.Second}
	s := start(t, cfg)
	c := client(t)
	url := s.URL()
	for i := range 2 {
		if st, _, _ := post(t, c, s, body("m", "hi", nil)); st != 200 {
			t.Fatalf("request %d: status %d", i+1, st)
		}
	}
	if _, err := c.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(body("m", "hi", nil))); err == nil {
		t.Fatal("the request after crash_after got an answer")
	}
	st := waitState(t, s, "restarted", func(st State) bool { return st.Up && st.Generation == 2 })
	if s.URL() != url || st.Busy != 0 {
		t.Errorf("after restart: url %s (was %s), %+v", s.URL(), url, st)
	}
	if code, _, _ := post(t, c, s, body("m", "hi", nil)); code != 200 {
		t.Errorf("after restart: status %d", code)
	}
	stats := s.Stats()
	if stats.Crashes != 1 || stats.Restarts != 1 || stats.Faults["crash"] != 1 {
		t.Errorf("stats %+v", stats)
	}
}

func TestManualCrashDropsConnectionsAndRestartListensAgain(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, TimeScale: 1,
		Spec:    simspec.Server{Backend: BackendLMStudio, Preload: []string{"m"}},
		Catalog: map[string]simspec.Model{"m": {TTFT: time.Hour}}}
	s := start(t, cfg)
	c := client(t)
	ctx, cancel := contextWithTimeout()
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- postCtx(ctx, c, s, body("m", "hi", nil)) }()
	waitState(t, s, "request running", func(st State) bool { return st.Busy == 1 })

	s.Crash()
	if err := <-errc; err == nil || ctx.Err() != nil {
		t.Errorf("in-flight request after a crash: %v (context %v)", err, ctx.Err())
	}
	if _, err := c.Get(s.URL() + "/models"); err == nil {
		t.Error("a crashed server answered")
	}
	if st := s.State(); st.Up {
		t.Error("state says up after a crash")
	}
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if err := s.Restart(); err == nil {
		t.Error("Restart of a running server did not fail")
	}
	status, _ := get(t, c, s, "/v1/models")
	st := s.State()
	if status != http.StatusOK || !st.Up || st.Generation != 2 || st.Busy != 0 || !slices.Equal(st.Resident, []string{"m"}) {
		t.Errorf("after restart: status %d, state %+v", status, st)
	}
}
