package gpu

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func TestABudgetHoldsRequestsToTheConfiguredRPM(t *testing.T) {
	b := newBudget(2, 0)
	for i := range 2 {
		if w := b.wait(t0.Add(time.Duration(i) * time.Second)); w != 0 {
			t.Fatalf("request %d waits %s under an rpm of 2", i+1, w)
		}
		b.started(t0.Add(time.Duration(i) * time.Second))
	}
	if w := b.wait(t0.Add(10 * time.Second)); w != 50*time.Second {
		t.Errorf("the third request waits %s, want 50s (until the first leaves the minute)", w)
	}
	if w := b.wait(t0.Add(time.Minute)); w != 0 {
		t.Errorf("a minute after the first, the third waits %s", w)
	}
}

func TestABudgetHoldsRequestsToTheConfiguredTPM(t *testing.T) {
	b := newBudget(0, 1000)
	b.started(t0)
	b.ended(t0.Add(time.Second), 600, nil)
	if w := b.wait(t0.Add(2 * time.Second)); w != 0 {
		t.Fatalf("600 of 1000 tokens spent: waits %s", w)
	}
	b.started(t0.Add(2 * time.Second))
	b.ended(t0.Add(3*time.Second), 500, nil)
	if w := b.wait(t0.Add(4 * time.Second)); w != 57*time.Second {
		t.Errorf("1100 of 1000 tokens spent: waits %s, want 57s (until the first 600 leave the minute)", w)
	}
}

func TestABudgetKeepsWhatTheAPIsHeadersSay(t *testing.T) {
	b := newBudget(0, 0)
	b.started(t0)
	b.ended(t0.Add(time.Second), 100, &chat.RateLimit{Requests: 1, Tokens: -1, RequestsReset: 10 * time.Second})
	if w := b.wait(t0.Add(time.Second)); w != 0 {
		t.Fatalf("one request left: waits %s", w)
	}
	b.started(t0.Add(time.Second)) // the last one the API allows
	if w := b.wait(t0.Add(2 * time.Second)); w != 9*time.Second {
		t.Errorf("none left: waits %s, want 9s (the reset the API gave)", w)
	}
	if w := b.wait(t0.Add(11 * time.Second)); w != 0 {
		t.Errorf("after the reset: waits %s", w)
	}
	// Tokens the same way.
	b.ended(t0.Add(12*time.Second), 10, &chat.RateLimit{Requests: 50, Tokens: 0, TokensReset: 3 * time.Second})
	if w := b.wait(t0.Add(12 * time.Second)); w != 3*time.Second {
		t.Errorf("no tokens left: waits %s, want 3s", w)
	}
}

// Four requests go out at once to an API that allows four; the reply to
// the first says three are left, counted before the other three arrived.
// The budget takes those three off: none is left.
func TestABudgetCountsTheRequestsAReplyDidNotSee(t *testing.T) {
	b := newBudget(0, 0)
	for range 4 {
		b.started(t0)
	}
	b.ended(t0.Add(time.Second), 10, &chat.RateLimit{Requests: 3, Tokens: -1, RequestsReset: 5 * time.Second})
	if w := b.wait(t0.Add(time.Second)); w != 5*time.Second {
		t.Errorf("after the first of four replies: waits %s, want 5s (none left until the reset)", w)
	}
}

// windowAPI is a hosted API that allows limit requests a window, counts
// each as it arrives, says what is left and when it comes back in
// OpenAI's headers with every answer, and answers 429 past the limit.
type windowAPI struct {
	mu       sync.Mutex
	limit    int
	window   time.Duration
	began    time.Time
	count    int
	rejected int
	served   int
}

func (a *windowAPI) handle(w http.ResponseWriter, r *http.Request) {
	body := oaitest.Decode(r)
	a.mu.Lock()
	now := time.Now()
	if now.Sub(a.began) >= a.window {
		a.began, a.count = now, 0
	}
	a.count++
	over := a.count > a.limit
	if over {
		a.rejected++
	} else {
		a.served++
	}
	left, reset := max(a.limit-a.count, 0), a.began.Add(a.window).Sub(now)
	a.mu.Unlock()
	w.Header().Set("x-ratelimit-limit-requests", fmt.Sprint(a.limit))
	w.Header().Set("x-ratelimit-remaining-requests", fmt.Sprint(left))
	w.Header().Set("x-ratelimit-reset-requests", reset.String())
	if over {
		w.Header().Set("retry-after-ms", fmt.Sprint(reset.Milliseconds()))
		oaitest.Error(429, "application/json", `{"error":{"message":"Rate limit reached for requests","type":"requests"}}`)(w, r)
		return
	}
	time.Sleep(20 * time.Millisecond) // a hosted API takes a while
	oaitest.Reply(w, body.Model, "ok")
}

// A run of 24 requests, four slots, against an API that allows five a
// quarter second and says so in its headers: every request is answered
// and none is refused, so the run keeps the limit rather than hitting it;
// and it uses what the limit allows (not one request at a time).
func TestAFleetKeepsAHostedAPIsRateLimitFromItsHeaders(t *testing.T) {
	api := &windowAPI{limit: 5, window: 250 * time.Millisecond}
	srv := oaitest.Server(t, api.handle, "m")
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "api", URL: srv.URL + "/v1", Kind: "openai"}, Slots: 4, Models: []string{"m"}}}, Options{})
	defer f.Close()
	const n = 24
	jobs := make([]*trackedJob, n)
	start := time.Now()
	for i := range jobs {
		jobs[i] = trackJob("m", fmt.Sprint("q", i))
		f.Submit(context.Background(), jobs[i].job)
	}
	for _, j := range jobs {
		wantOK(t, j.wait(t))
	}
	took := time.Since(start)
	api.mu.Lock()
	defer api.mu.Unlock()
	if api.rejected != 0 || api.served != n {
		t.Errorf("the API refused %d requests and served %d; want none refused and %d served", api.rejected, api.served, n)
	}
	// 24 requests at 5 a quarter second need at least four windows past
	// the first; one at a time (20 ms each) would need about 0.5 s too, so
	// bound it from above by what keeping the limit allows: a few windows.
	t.Logf("24 requests in %s", took)
	if took > 2*time.Second {
		t.Errorf("24 requests took %s at 5 per 250 ms: the budget waits far longer than the limit asks", took)
	}
}
