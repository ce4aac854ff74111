package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// flakyServer is an OpenAI-compatible server that answers the first `fail`
// chat requests with 500 and the rest with a streamed "42". It keeps every
// request body it was sent.
type flakyServer struct {
	mu     sync.Mutex
	fail   int
	bodies []map[string]any
}

func (f *flakyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	failing := f.fail > 0
	if failing {
		f.fail--
	}
	f.mu.Unlock()
	if failing {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s) }
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"42"}}]}`)
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	chunk(`[DONE]`)
}

func flakyConfig(t *testing.T, url string, retries int) *harness {
	t.Helper()
	cfg := testConfig(t, fmt.Sprintf(`
[run]
retries = %d
temperature = 0.0
[[servers]]
name = "s"
url = %q
kind = "openai"
slots = 1
`, retries, url))
	cfg.Models = []string{"m"}
	cfg.Tests = cfg.Tests[2:3] // "math": contains 42
	return newHarness(t, cfg, true)
}

func TestTransientErrorsAreRetriedAndEveryAttemptIsRecorded(t *testing.T) {
	t.Parallel()
	srv := &flakyServer{fail: 2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	h := flakyConfig(t, ts.URL+"/v1", 2)
	b := h.finish(t)
	c := b.Cell(0, 0, 0)
	if c.Status != state.Completed || c.Attempts != 3 {
		t.Fatalf("cell %s after %d attempts, want completed after 3", c.Status, c.Attempts)
	}
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeInference {
			got = append(got, fmt.Sprintf("%d:%s:%s", q.Attempt, q.Status, q.ErrorClass))
		}
	}
	want := "1:error:http_5xx 2:error:http_5xx 3:completed:"
	if strings.Join(got, " ") != want {
		t.Errorf("ledger attempts %q, want %q", strings.Join(got, " "), want)
	}
}

func TestRetriesRunOutIntoAnErrorCell(t *testing.T) {
	t.Parallel()
	srv := &flakyServer{fail: 10}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	h := flakyConfig(t, ts.URL+"/v1", 1)
	b := h.finish(t)
	c := b.Cell(0, 0, 0)
	if c.Status != state.Errored || c.Said().ErrorClass != chat.ClassHTTP5xx || !strings.Contains(c.Said().Error, "overloaded") || c.Attempts != 2 {
		t.Fatalf("cell %+v, want a ⚠️ http_5xx after 2 attempts naming the server's message", c)
	}
	if state.ExitCode(b, false) != state.ExitFail {
		t.Errorf("exit code %d, want 1", state.ExitCode(b, false))
	}
}

func TestTemperatureZeroReachesTheServer(t *testing.T) {
	t.Parallel()
	srv := &flakyServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	h := flakyConfig(t, ts.URL+"/v1", 0)
	h.finish(t)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(srv.bodies))
	}
	temp, ok := srv.bodies[0]["temperature"]
	if !ok || temp != 0.0 {
		t.Errorf("temperature on the wire = %v (present %v), want 0", temp, ok)
	}
	if seed := srv.bodies[0]["seed"]; seed != 42.0 {
		t.Errorf("seed on the wire = %v, want 42", seed)
	}
}

func TestRetryBudgets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		class   chat.ErrorClass
		retries int
		temp0   bool
		want    int
	}{
		{chat.ClassHTTP4xx, 2, true, 0},
		{chat.ClassCanceled, 2, true, 0},
		{chat.ClassHTTP5xx, 2, true, 2},
		{chat.ClassTimeout, 0, true, 0},
		{chat.ClassMalformed, 2, true, 1},
		{chat.ClassMalformed, 2, false, 1},
		{chat.ClassMalformed, 0, true, 0},
		{chat.ClassUnavailable, 2, true, 2},
		{chat.ClassCut, 3, true, 1},
		{chat.ClassCut, 0, true, 0},
		{chat.ClassCut, 3, false, 3},
	}
	for _, c := range cases {
		if got := retryBudget(c.class, c.retries, c.temp0); got != c.want {
			t.Errorf("retryBudget(%s, %d, temperature 0 %v) = %d, want %d", c.class, c.retries, c.temp0, got, c.want)
		}
	}
}

func TestFailoversDoNotSpendTheRetries(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                        string
		class                       chat.ErrorClass
		attempt, failovers, retries int
		want                        bool
	}{
		{"a timeout after a failover still has its retry", chat.ClassTimeout, 2, 1, 1, true},
		{"a second timeout after a failover has none", chat.ClassTimeout, 3, 1, 1, false},
		{"a timeout with no retries", chat.ClassTimeout, 1, 0, 0, false},
		{"a server going away moves the cell", chat.ClassUnavailable, 5, 4, 0, true},
		{"until the failovers run out", chat.ClassUnavailable, 9, failoverAttempts, 2, false},
		{"a 4xx is never retried", chat.ClassHTTP4xx, 1, 0, 5, false},
	}
	for _, c := range cases {
		if got := mayRetry(c.class, c.attempt, c.failovers, c.retries, true); got != c.want {
			t.Errorf("%s: mayRetry = %v, want %v", c.name, got, c.want)
		}
	}
}
