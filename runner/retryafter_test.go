package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/runner/state"
)

// rateLimiter answers its first `limited` chat requests 429 with a
// Retry-After, then a streamed "42".
type rateLimiter struct {
	retryAfter string
	limited    int32
	chats      atomic.Int32
}

func (l *rateLimiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	}
	if l.chats.Add(1) <= l.limited {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", l.retryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`)
		return
	}
	(&flakyServer{}).ServeHTTP(w, r)
}

func rateLimitedHarness(t *testing.T, url string) *harness {
	t.Helper()
	cfg := testConfig(t, fmt.Sprintf(`
[run]
retries = 3
timeout = "300s"
temperature = 0.0
[[servers]]
name = "s0"
url = %q
kind = "openai"
slots = 1
`, url))
	cfg.Models = []string{"m"}
	cfg.Tests = cfg.Tests[2:3] // "math": contains 42
	return newHarness(t, cfg, true)
}

func TestARetryAfterBeyondTheTimeoutEndsTheCellRateLimited(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, retryAfter, want string
	}{
		{"a day in seconds", "86400", "server s0 asked to retry after 24h, beyond timeout 300s"},
		{"an HTTP date a year ahead", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat), "server s0 asked to retry after "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &rateLimiter{retryAfter: tc.retryAfter, limited: 1 << 30}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			h := rateLimitedHarness(t, ts.URL+"/v1")
			start := time.Now()
			b := h.finish(t)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the run took %s: the Retry-After held it", d)
			}
			c := b.Cell(0, 0, 0)
			if c.Status != state.Errored || c.Said().ErrorClass != chat.ClassRateLimit ||
				!strings.HasPrefix(c.Said().Error, tc.want) || !strings.Contains(c.Said().Error, "beyond timeout 300s") {
				t.Errorf("cell %s %s %q, want ⚠️ rate_limit saying %q … beyond timeout 300s", c.Status, c.Said().ErrorClass, c.Said().Error, tc.want)
			}
			if n := srv.chats.Load(); n != 1 {
				t.Errorf("the server saw %d requests, want 1: a wait beyond the timeout is not retried", n)
			}
		})
	}
}

func TestAShortRetryAfterIsWaitedOutAndTheRequestThenSucceeds(t *testing.T) {
	t.Parallel()
	srv := &rateLimiter{retryAfter: "2", limited: 1}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	h := rateLimitedHarness(t, ts.URL+"/v1")
	start := time.Now()
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	// While it waits, the cell says on what and until when.
	var seen string
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline) && seen == ""; time.Sleep(10 * time.Millisecond) {
		if b := h.run.Latest(); b != nil {
			if c := b.Cell(0, 0, 0); c != nil && c.Status == state.Queued && c.Said().ErrorClass == chat.ClassRateLimit {
				seen = c.Said().Error
			}
		}
	}
	if !strings.Contains(seen, "server s0 asked to retry after 2s: waiting until ") {
		t.Errorf("while waiting, the cell says %q; want what s0 asked for and until when", seen)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := h.run.Wait(ctx)
	if !b.Final {
		t.Fatalf("run did not finish: %+v", b.Counts)
	}
	c := b.Cell(0, 0, 0)
	if c.Status != state.Completed || c.Attempts != 2 {
		t.Errorf("cell %s after %d attempts (%s %q), want completed after 2", c.Status, c.Attempts, c.Said().ErrorClass, c.Said().Error)
	}
	if d := time.Since(start); d < 1900*time.Millisecond {
		t.Errorf("the retry came after %s, before the 2s the server asked for", d)
	}
}
