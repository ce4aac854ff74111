package gpu

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

// limitedServer answers its first `limited` chat requests 429 with the
// given Retry-After, the rest "ok", and counts them.
func limitedServer(t *testing.T, retryAfter func() string, limited int32) (url string, chats *atomic.Int32) {
	chats = new(atomic.Int32)
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		if chats.Add(1) <= limited {
			w.Header().Set("Retry-After", retryAfter())
			oaitest.Error(429, "application/json", `{"error":{"message":"Rate limit reached","type":"requests"}}`)(w, r)
			return
		}
		oaitest.Reply(w, body.Model, "ok")
	}, "m")
	return srv.URL + "/v1", chats
}

func TestARetryAfterBeyondTheJobsLimitsEndsItRateLimited(t *testing.T) {
	t.Parallel()
	// An HTTP date has whole seconds: half a second more makes the wait
	// 48h to the nearest second, whenever in its second the test runs.
	inTwoDays := func() string { return time.Now().Add(48*time.Hour + time.Second/2).UTC().Format(http.TimeFormat) }
	cases := []struct {
		name             string
		retryAfter       func() string
		timeout, maxWait time.Duration
		want             string
	}{
		{"a day in seconds, beyond the timeout", func() string { return "86400" }, 300 * time.Second, 0,
			"server limited asked to retry after 24h, beyond timeout 300s"},
		{"an HTTP date two days ahead, beyond max_wait", inTwoDays, 0, 10 * time.Minute,
			"server limited asked to retry after 48h, beyond max_wait 600s"},
		{"the shorter of timeout and max_wait is the limit", func() string { return "120" }, 5 * time.Minute, time.Minute,
			"server limited asked to retry after 120s, beyond max_wait 60s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, chats := limitedServer(t, tc.retryAfter, 1<<30)
			f := NewFleet([]ServerConfig{{Config: client.Config{Name: "limited", URL: url, Kind: "vllm"}, Slots: 1, Models: []string{"m"}}},
				Options{MaxWait: tc.maxWait})
			defer f.Close()

			start := time.Now()
			first := trackJob("m", "first")
			first.job.Timeout = tc.timeout
			f.Submit(context.Background(), first.job)
			o := first.wait(t)
			wantClass(t, o, chat.ClassRateLimit)
			if !errors.Is(o.err, ErrGaveUp) || chat.MessageOf(o.err) != tc.want {
				t.Errorf("first job: %v (gave up %v); want the message %q and ErrGaveUp", o.err, errors.Is(o.err, ErrGaveUp), tc.want)
			}

			// A job queued for the held server does not wait out the hold
			// either, and is not sent.
			second := trackJob("m", "second")
			second.job.Timeout = tc.timeout
			f.Submit(context.Background(), second.job)
			o = second.wait(t)
			wantClass(t, o, chat.ClassRateLimit)
			if !errors.Is(o.err, ErrGaveUp) || len(chat.MessageOf(o.err)) < len(tc.want) || chat.MessageOf(o.err)[:len(tc.want)] != tc.want {
				t.Errorf("queued job: %v; want it to start %q", o.err, tc.want)
			}
			if n := chats.Load(); n != 1 {
				t.Errorf("the server saw %d chat requests, want 1: the queued job must not be sent into the hold", n)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the jobs took %s to end, want well under the limits", d)
			}
		})
	}
}

func TestAShortRetryAfterIsHonouredAndTheServerThenServes(t *testing.T) {
	t.Parallel()
	url, chats := limitedServer(t, func() string { return "2" }, 1)
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{now: t0}
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "limited", URL: url, Kind: "vllm"}, Slots: 1, Models: []string{"m"}}},
		Options{Now: clock.Now, MaxWait: time.Minute})
	defer f.Close()

	first := trackJob("m", "first")
	first.job.Timeout = 30 * time.Second
	f.Submit(context.Background(), first.job)
	o := first.wait(t)
	wantClass(t, o, chat.ClassRateLimit)
	var e *chat.Error
	if errors.Is(o.err, ErrGaveUp) || !errors.As(o.err, &e) || e.RetryAfter != 2*time.Second {
		t.Fatalf("first job: %v; want a 429 to retry after 2s, not a give-up", o.err)
	}

	next := trackJob("m", "next")
	next.job.Timeout = 30 * time.Second
	f.Submit(context.Background(), next.job)
	time.Sleep(2 * strandedRecheck) // the monitor looks at the queue meanwhile
	if !next.pending() || chats.Load() != 1 {
		t.Fatalf("within the hold: job pending %v, %d requests; want it waiting, 1", next.pending(), chats.Load())
	}
	if st := byServer(f.State())["limited"]; !st.HeldUntil.Equal(t0.Add(2*time.Second)) || st.RetryAfter != 2*time.Second {
		t.Errorf("state held until %v for %v, want +2s for 2s", st.HeldUntil, st.RetryAfter)
	}
	clock.Set(t0.Add(2 * time.Second))
	f.signal()
	wantOK(t, next.wait(t))
}
