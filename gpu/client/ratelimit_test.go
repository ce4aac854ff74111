package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"
)

func TestAReplyCarriesTheRateLimitItsHeadersSay(t *testing.T) {
	reset := time.Now().Add(30 * time.Second).UTC().Format(time.RFC3339)
	for _, tt := range []struct {
		name    string
		headers map[string]string
		want    chat.RateLimit
		near    [2]time.Duration // RequestsReset, TokensReset, to the second
	}{
		{"OpenAI", map[string]string{"x-ratelimit-remaining-requests": "59", "x-ratelimit-remaining-tokens": "149000",
			"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"},
			chat.RateLimit{Requests: 59, Tokens: 149000}, [2]time.Duration{time.Second, 6 * time.Minute}},
		{"Azure (no resets)", map[string]string{"x-ratelimit-remaining-requests": "3", "x-ratelimit-remaining-tokens": "80"},
			chat.RateLimit{Requests: 3, Tokens: 80}, [2]time.Duration{}},
		{"Anthropic", map[string]string{"anthropic-ratelimit-requests-remaining": "4", "anthropic-ratelimit-requests-reset": reset,
			"anthropic-ratelimit-input-tokens-remaining": "900", "anthropic-ratelimit-output-tokens-remaining": "200",
			"anthropic-ratelimit-output-tokens-reset": reset},
			chat.RateLimit{Requests: 4, Tokens: 200}, [2]time.Duration{30 * time.Second, 30 * time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
				oaitest.Decode(r)
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				oaitest.Reply(w, "m", "hi")
			})
			c := New(Config{Name: "api", URL: srv.URL + "/v1"}, nil)
			res, err := c.Chat(context.Background(), hiRequest("m"))
			if err != nil {
				t.Fatal(err)
			}
			rl := res.RateLimit
			if rl == nil || rl.Requests != tt.want.Requests || rl.Tokens != tt.want.Tokens {
				t.Fatalf("rate limit %+v, want %+v", rl, tt.want)
			}
			for i, got := range []time.Duration{rl.RequestsReset, rl.TokensReset} {
				if d := got - tt.near[i]; d < -2*time.Second || d > time.Second {
					t.Errorf("reset %d: %s, want about %s", i, got, tt.near[i])
				}
			}
		})
	}
}

func TestA429sRetryAfterMSIsReadBeforeItsRetryAfter(t *testing.T) {
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
		w.Header().Set("retry-after-ms", "1500")
		w.Header().Set("Retry-After", "2")
		w.Header().Set("x-ratelimit-remaining-requests", "0")
		w.Header().Set("x-ratelimit-reset-requests", "1.5s")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`)
	})
	c := New(Config{Name: "api", URL: srv.URL + "/v1"}, nil)
	_, err := c.Chat(context.Background(), hiRequest("m"))
	var e *chat.Error
	if !errors.As(err, &e) || e.Class != chat.ClassRateLimit {
		t.Fatalf("error %v, want a rate limit", err)
	}
	if e.RetryAfter != 1500*time.Millisecond {
		t.Errorf("RetryAfter %s, want 1.5s from retry-after-ms", e.RetryAfter)
	}
	if e.RateLimit == nil || e.RateLimit.Requests != 0 || e.RateLimit.RequestsReset != 1500*time.Millisecond {
		t.Errorf("rate limit %+v, want none left for 1.5s", e.RateLimit)
	}
}
