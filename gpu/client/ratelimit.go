package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"pitwall/gpu/chat"
)

// rateLimitOf reads the rate-limit headers a hosted API sends with every
// reply: OpenAI's and Azure's x-ratelimit-remaining-{requests,tokens} with
// x-ratelimit-reset-{requests,tokens} as durations ("1s", "6m0s"), and
// Anthropic's anthropic-ratelimit-{requests,tokens}-{remaining,reset} with
// the reset as an RFC 3339 time (its input- and output-token budgets count
// as tokens, the smaller remaining of them). nil when none is there.
func rateLimitOf(h http.Header, now time.Time) *chat.RateLimit {
	rl := chat.RateLimit{Requests: -1, Tokens: -1}
	seen := false
	remaining := func(names ...string) int {
		left := -1
		for _, n := range names {
			if v, err := strconv.Atoi(strings.TrimSpace(h.Get(n))); err == nil && v >= 0 {
				seen = true
				if left < 0 || v < left {
					left = v
				}
			}
		}
		return left
	}
	reset := func(names ...string) time.Duration {
		var longest time.Duration
		for _, n := range names {
			if d := resetIn(h.Get(n), now); d > 0 {
				seen = true
				longest = max(longest, d)
			}
		}
		return longest
	}
	rl.Requests = remaining("x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining")
	rl.Tokens = remaining("x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining",
		"anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-output-tokens-remaining")
	rl.RequestsReset = reset("x-ratelimit-reset-requests", "anthropic-ratelimit-requests-reset")
	rl.TokensReset = reset("x-ratelimit-reset-tokens", "anthropic-ratelimit-tokens-reset",
		"anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-output-tokens-reset")
	if !seen {
		return nil
	}
	return &rl
}

// resetIn reads a reset header: a duration as OpenAI writes it ("20ms",
// "1s", "6m0s"), plain seconds, or an RFC 3339 time as Anthropic's; 0 when
// unreadable or past.
func resetIn(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if d, err := time.ParseDuration(v); err == nil {
		return max(d, 0)
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 && secs < 1e7 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// retryAfterMS reads OpenAI's and Azure's retry-after-ms, more exact than
// Retry-After's whole seconds; 0 when absent or unreadable.
func retryAfterMS(v string) time.Duration {
	ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || ms <= 0 || ms > 1e10 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}
