package sim

import (
	"math"
	"net/http"
	"pitwall/gpu/simspec"
	"strconv"
	"time"
)

// faultKind is the fault injected into one request.
type faultKind int

const (
	faultNone faultKind = iota
	faultError
	faultRateLimit
	faultHang
	faultCut
	faultMalformed
	faultCrash
)

func (k faultKind) String() string {
	return [...]string{"none", "error", "rate_limit", "hang", "cut", "malformed", "crash"}[k]
}

// pickFault draws the fault of a chat request from n, its content's hash
// and attempt (faultDraw). One uniform draw per request is laid over the
// rates end to end, so each kind happens at its own rate (when the rates sum
// to at most 1), and the same seed and n always give the same fault.
func pickFault(f simspec.Faults, seed, n int64) faultKind {
	u := unit(uint64(seed) ^ splitmix64(uint64(n)))
	acc := 0.0
	for _, c := range []struct {
		rate float64
		kind faultKind
	}{
		{f.ErrorRate, faultError},
		{f.RateLimitRate, faultRateLimit},
		{f.HangRate, faultHang},
		{f.CutRate, faultCut},
		{f.MalformedRate, faultMalformed},
	} {
		if acc += c.rate; u < acc {
			return c.kind
		}
	}
	return faultNone
}

// admit numbers an accepted chat request and decides what befalls it. The
// request that comes after simspec.Faults.CrashAfter requests of a generation
// crashes the server; it returns how long until the restart then.
// hash is the request's content (requestHash): its k-th attempt draws
// with hash and k, whatever else arrived before it.
func (s *Server) admit(g *generation, model string, hash uint64) (faultKind, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counters.requests++
	s.counters.requestsBy[model]++
	s.chats++
	g.chats++
	f := s.faults
	k := faultNone
	if f.ErrorRate+f.RateLimitRate+f.HangRate+f.CutRate+f.MalformedRate > 0 {
		if s.attempts == nil {
			s.attempts = map[uint64]uint64{}
		}
		s.attempts[hash]++
		k = pickFault(f, s.cfg.Seed, int64(splitmix64(hash^splitmix64(s.attempts[hash]))))
	}
	if f.CrashAfter > 0 && g.chats > f.CrashAfter {
		k = faultCrash
	}
	if k != faultNone {
		s.counters.faults[k.String()]++
	}
	s.notifyLocked()
	return k, f.RestartAfter
}

// writeRateLimit answers 429 with the retry delay, scaled. Retry-After
// carries whole seconds, so a scaled delay under a second rounds up to 1
// (0 under Instant); retry-after-ms, which OpenAI also sends, carries it
// exactly, for clients that read it.
func (s *Server) writeRateLimit(w http.ResponseWriter) {
	s.mu.Lock()
	d := s.faults.RetryAfter
	s.mu.Unlock()
	if d <= 0 {
		d = DefaultRetryAfter
	}
	wall := s.clock.wall(d)
	secs := int64(math.Ceil(wall.Seconds()))
	if !s.clock.instant && secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	w.Header().Set("retry-after-ms", strconv.FormatInt(wall.Milliseconds(), 10))
	s.writeError(w, apiError{kind: errRateLimit, message: "Rate limit reached for requests (simulated). Please try again later."})
}
