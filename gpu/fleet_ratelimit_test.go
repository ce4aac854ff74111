package gpu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func TestFleetHoldsARateLimitedServerUntilItsRetryAfter(t *testing.T) {
	var limitedChats, okChats atomic.Int32
	limited := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		if limitedChats.Add(1) == 1 {
			w.Header().Set("Retry-After", "30")
			oaitest.Error(429, "application/json", `{"error":{"message":"Rate limit reached","type":"requests"}}`)(w, r)
			return
		}
		oaitest.Reply(w, body.Model, "ok")
	}, "m")
	fine := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		okChats.Add(1)
		oaitest.Reply(w, oaitest.Decode(r).Model, "ok")
	}, "m")
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{now: t0}
	f := NewFleet([]ServerConfig{
		{Config: client.Config{Name: "limited", URL: limited.URL + "/v1", Kind: "vllm"}, Slots: 2, Models: []string{"m"}},
		{Config: client.Config{Name: "fine", URL: fine.URL + "/v1", Kind: "vllm"}, Slots: 2, Models: []string{"m"}},
	}, Options{Now: clock.Now})
	defer f.Close()

	first := trackJob("m", "first")
	first.job.Pin = "limited"
	f.Submit(context.Background(), first.job)
	o := first.wait(t)
	wantClass(t, o, chat.ClassRateLimit)
	var e *chat.Error
	if !errors.As(o.err, &e) || e.RetryAfter != 30*time.Second {
		t.Fatalf("429 error %v: want RetryAfter 30s", o.err)
	}

	pinned := trackJob("m", "pinned")
	pinned.job.Pin = "limited"
	f.Submit(context.Background(), pinned.job)
	// Each step submits a free job and waits for it: the dispatcher has
	// then seen the pinned job and the clock at that step.
	for i, at := range []time.Duration{0, 29 * time.Second, 30*time.Second - time.Nanosecond} {
		clock.Set(t0.Add(at))
		free := trackJob("m", fmt.Sprint("free", i))
		f.Submit(context.Background(), free.job)
		wantOK(t, free.wait(t))
		if s := <-free.dispatched; s != "fine" {
			t.Errorf("at +%s a free job ran on %s, want fine: limited is held", at, s)
		}
		st := byServer(f.State())
		if !pinned.pending() || limitedChats.Load() != 1 || !st["limited"].HeldUntil.Equal(t0.Add(30*time.Second)) || st["limited"].Queue != 1 {
			t.Fatalf("at +%s: pinned job pending %v, %d requests to limited, held until %v, queue %d; want the job waiting, 1, +30s, 1",
				at, pinned.pending(), limitedChats.Load(), st["limited"].HeldUntil, st["limited"].Queue)
		}
	}

	clock.Set(t0.Add(30 * time.Second))
	f.signal() // as the monitor does when the hold's time comes
	wantOK(t, pinned.wait(t))
	if s := <-pinned.dispatched; s != "limited" {
		t.Errorf("pinned job ran on %s", s)
	}
	if st := byServer(f.State()); !st["limited"].HeldUntil.IsZero() || !st["limited"].Up {
		t.Errorf("after the hold: held until %v, up %v; want no hold, up", st["limited"].HeldUntil, st["limited"].Up)
	}
}
