package runner

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/runner/state"
)

func TestARunWhoseHeartbeatsKeepUpWritesNothingMoreToSendItsRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, simFleet), true)
	var asked atomic.Int64
	check := h.run.beforeSend
	h.run.beforeSend = func(ctx context.Context) error {
		asked.Add(1)
		return check(ctx)
	}
	b := h.finish(t)
	if b.Status != state.RunCompleted {
		t.Fatalf("run ended %s (%s), want completed", b.Status, b.Message)
	}
	sent := 0
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs {
		if !q.StartedAt.IsZero() {
			sent++
		}
	}
	if sent == 0 || asked.Load() < int64(sent) {
		t.Errorf("the gate was asked %d times for %d requests sent; want once for each at least", asked.Load(), sent)
	}
	if n := h.run.owner.checks.Load(); n != 0 {
		t.Errorf("the gate wrote %d heartbeats of its own in a run whose heartbeats kept up, want none", n)
	}
}

// heldServer is an OpenAI-compatible server that holds its first chat
// request until release is closed and answers the rest at once, counting
// every chat request it gets.
type heldServer struct {
	requests atomic.Int64
	arrived  chan struct{}
	release  chan struct{}
	once     sync.Once
}

func (s *heldServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	}
	io.Copy(io.Discard, r.Body)
	if s.requests.Add(1) == 1 {
		s.once.Do(func() { close(s.arrived) })
		<-s.release
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(x string) { fmt.Fprintf(w, "data: %s\n\n", x) }
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"42"}}]}`)
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	chunk(`[DONE]`)
}

// TestAnOwnerSilentPastItsHeartbeatsAsksTheLedgerAndSendsNothingOnceTakenOver:
// the process was silent (its last heartbeat the ledger took is old) and
// another host took its run over meanwhile; the jobs its fleet queued
// before are dispatched as a slot frees, and not one reaches the server.
func TestAnOwnerSilentPastItsHeartbeatsAsksTheLedgerAndSendsNothingOnceTakenOver(t *testing.T) {
	t.Parallel()
	srv := &heldServer{arrived: make(chan struct{}), release: make(chan struct{})}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer func() {
		select {
		case <-srv.release:
		default:
			close(srv.release)
		}
	}()
	cfg := testConfig(t, fmt.Sprintf(`
[[servers]]
name = "s"
url = %q
kind = "openai"
slots = 1
`, ts.URL+"/v1"))
	cfg.Models = []string{"m"}
	h := newHarness(t, cfg, true)
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the first request never arrived")
	}

	// Another host's resume: the run's generation moves on.
	db, err := sql.Open("sqlite", "file:"+cfg.DB+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET generation = generation + 1, pid = 4242, host = 'host-b' WHERE id = ?`, h.run.ID()); err != nil {
		t.Fatal(err)
	}
	// As the process finds it on waking: its last heartbeat long ago.
	h.run.owner.confirm(time.Now().Add(-2 * ownerFresh))
	close(srv.release)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := h.run.Wait(ctx)
	if !b.Final {
		t.Fatal("the run did not end")
	}
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("the server got %d requests; want only the 1 sent before the take-over", n)
	}
	if b.Status != state.RunFailed || !strings.Contains(b.Message, "taken over by pid 4242 on host-b") {
		t.Errorf("run ended %s: %q; want failed, saying pid 4242 on host-b took it over", b.Status, b.Message)
	}
}
