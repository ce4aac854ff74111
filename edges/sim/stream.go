package sim

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"time"
)

// answer is one admitted request on its way out: one plan per choice.
type answer struct {
	s       *Server
	e       *engine
	m       *modelRun
	req     *chatRequest
	plans   []plan
	prompt  int
	prefill time.Duration // simulated
	fault   faultKind

	timer   *time.Timer
	due     time.Time     // when the tokens decoded so far are due, on the wall clock
	decoded time.Duration // simulated decode time so far
	kv      int
}

// eventTokens is how many tokens go in one SSE event: a few, more when the
// wall-clock rate is high so that a fast stream costs fewer events and
// timers (one per 25 ms or so), but never so many that a reply comes in
// one piece.
func (a *answer) eventTokens() int {
	if a.s.clock.instant {
		return 4
	}
	perWallSecond := a.m.ms.TokensPerSec / a.s.clock.scale
	return min(16, max(2, int(math.Ceil(perWallSecond*0.025))))
}

// produce decodes one round: each event's tokens are booked, and the round
// takes as long as its longest event at the rate each stream gets now
// (the choices of one request decode side by side).
func (a *answer) produce(ctx context.Context, round []event) error {
	var dt time.Duration
	for _, ev := range round {
		dt = max(dt, a.e.decodeStep(a.m, ev.tokens))
		a.kv += ev.tokens
	}
	a.decoded += dt
	w := a.s.clock.wall(dt)
	if w <= 0 {
		return ctx.Err()
	}
	// Sleep to an absolute deadline: timers wake late, and at a small time
	// scale relative sleeps would add up to a slower simulated GPU.
	if a.due.IsZero() {
		a.due = time.Now()
	}
	a.due = a.due.Add(w)
	if w = time.Until(a.due); w <= 0 {
		return ctx.Err()
	}
	if a.timer == nil {
		a.timer = time.NewTimer(w)
	} else {
		a.timer.Reset(w)
	}
	select {
	case <-a.timer.C:
		return nil
	case <-ctx.Done():
		a.timer.Stop()
		return ctx.Err()
	}
}

// stream answers with server-sent events: per choice a role chunk (on
// Ollama, the role rides on every delta instead), its deltas, and a chunk
// with its finish_reason; then, with include_usage, a usage chunk with no
// choices; then [DONE]. It returns whether the reply ended whole and
// well-formed.
func (a *answer) stream(ctx context.Context, w http.ResponseWriter) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	openai := a.s.cfg.Spec.Backend == BackendOpenAI
	includeUsage := a.req.StreamOptions != nil && a.req.StreamOptions.IncludeUsage
	base := chunk{ID: a.id(), Object: "chat.completion.chunk", Created: time.Now().Unix(), Model: a.req.Model,
		SystemFingerprint: a.s.systemFingerprint(a.req.Model)}
	if openai {
		base.ServiceTier = "default"
		if includeUsage {
			base.Usage = jsonNull // OpenAI: every chunk but the last carries "usage": null
		}
	}
	buf := make([]byte, 0, 512)
	send := func(c chunk) error {
		body, err := json.Marshal(c)
		if err != nil {
			return err
		}
		buf = append(append(append(buf[:0], "data: "...), body...), "\n\n"...)
		return a.flush(w, rc, buf)
	}
	choice := func(i int, d delta, finish *string) chunk {
		c := base
		c.Choices = []chunkChoice{{Index: i, Delta: d, FinishReason: finish}}
		return c
	}
	d := dialectOf(a.s.cfg.Spec.Backend)
	empty := ""
	for i := range a.plans {
		if d.ollamaChunks {
			break // Ollama's role rides on every delta instead
		}
		rd := delta{Role: "assistant", Content: &empty}
		if openai {
			rd.Refusal = jsonNull
		}
		if send(choice(i, rd, nil)) != nil {
			return false
		}
	}
	a.e.beginDecode(a.m, a.prompt, len(a.plans))
	defer func() { a.e.endDecode(a.m, len(a.plans), a.prompt+a.kv) }()

	rs := rounds(a.plans, a.eventTokens(), d.ollamaChunks)
	half := len(rs) / 2
	for r, round := range rs {
		if a.fault == faultCut && r == max(half, 1) {
			a.cut(rc)
		}
		if a.fault == faultMalformed && r == half {
			if a.flush(w, rc, []byte("data: {not json\n\n")) != nil {
				return false
			}
		}
		if a.produce(ctx, round) != nil {
			return false
		}
		for _, ev := range round {
			ed := a.delta(ev)
			if d.ollamaChunks {
				ed.Role = "assistant"
			}
			if send(choice(ev.choice, ed, nil)) != nil {
				return false
			}
		}
	}
	switch {
	case a.fault == faultCut: // too short to cut inside: cut before the end
		a.cut(rc)
	case a.fault == faultMalformed && len(rs) == 0:
		if a.flush(w, rc, []byte("data: {not json\n\n")) != nil {
			return false
		}
	}
	var last *chunk
	for i, p := range a.plans {
		finish := p.finish
		fd := delta{}
		if d.ollamaChunks {
			fd = delta{Role: "assistant", Content: &empty}
		}
		c := choice(i, fd, &finish)
		if last != nil && send(*last) != nil {
			return false
		}
		last = &c
	}
	if includeUsage {
		if send(*last) != nil {
			return false
		}
		u := base
		u.Choices = []chunkChoice{}
		u.Usage = a.usage()
		last = &u
	}
	last.Timings = a.timings()
	if send(*last) != nil {
		return false
	}
	return a.flush(w, rc, []byte("data: [DONE]\n\n")) == nil && a.fault == faultNone
}

// flush writes b and sends it now. Under Instant, where no time passes
// between events, the events go out as the response buffer fills instead:
// one write per event would make the simulator's syscalls, not the client
// under test, the cost a benchmark measures.
func (a *answer) flush(w http.ResponseWriter, rc *http.ResponseController, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	if a.s.clock.instant {
		return nil
	}
	return rc.Flush()
}

// cut sends what the stream has so far and drops the connection without
// ending the chunked body: the client sees the stream break mid-way.
func (a *answer) cut(rc *http.ResponseController) {
	_ = rc.Flush() // the connection is dropped next whatever happens
	panic(http.ErrAbortHandler)
}

// delta is the chunk delta of one event. A tool call's first delta carries
// its index, id, type, name and empty arguments; the later ones its index
// and a piece of the arguments, as OpenAI streams them.
func (a *answer) delta(ev event) delta {
	if ev.call < 0 {
		c := ev.content
		return delta{Content: &c}
	}
	idx := ev.call
	tc := wireToolCall{Index: &idx, Function: wireCallFunc{Arguments: ev.args}}
	if ev.header {
		pc := a.plans[ev.choice].calls[ev.call]
		tc.ID, tc.Type, tc.Function.Name = pc.id, "function", pc.name
	}
	return delta{ToolCalls: []wireToolCall{tc}}
}
