package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// plannedCall is a tool call cut into tokens for streaming.
type plannedCall struct {
	id   string
	name string
	args []string
}

// plan is a reply cut into tokens and cut to max_tokens.
type plan struct {
	content []string
	calls   []plannedCall
	finish  string // stop | tool_calls | length
	tokens  int    // completion tokens
}

// planReply tokenises r and applies the max_tokens budget (0: none). A
// call's name costs one token; a call cut short keeps invalid arguments,
// as a real model's would.
func planReply(r reply, maxTokens int) plan {
	budget := maxTokens
	if budget <= 0 {
		budget = math.MaxInt
	}
	p := plan{content: splitTokens(r.content), finish: "stop"}
	if len(p.content) > budget {
		p.content = p.content[:budget]
		p.finish = "length"
	}
	left := budget - len(p.content)
	for i, c := range r.calls {
		if p.finish == "length" {
			break
		}
		if left < 1 {
			p.finish = "length"
			break
		}
		pc := plannedCall{id: fmt.Sprintf("call_%d_%08x", i, uint32(hashString(c.name+c.args))), name: c.name, args: splitTokens(c.args)}
		left--
		if len(pc.args) > left {
			pc.args = pc.args[:left]
			p.finish = "length"
		}
		left -= len(pc.args)
		p.calls = append(p.calls, pc)
	}
	if p.finish == "stop" && len(p.calls) > 0 {
		p.finish = "tool_calls"
	}
	p.tokens = len(p.content)
	for _, c := range p.calls {
		p.tokens += 1 + len(c.args)
	}
	if p.tokens == 0 {
		// Even a model that says nothing spends a token on end-of-sequence,
		// and servers count it.
		p.tokens = 1
	}
	return p
}

// hashString is FNV-1a of s.
func hashString(s string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// answer is one admitted request on its way out.
type answer struct {
	s       *Server
	e       *engine
	m       *modelRun
	req     *chatRequest
	plan    plan
	prompt  int
	prefill time.Duration // simulated
	fault   faultKind

	timer   *time.Timer
	due     time.Time     // when the tokens decoded so far are due, on the wall clock
	decoded time.Duration // simulated decode time so far
	kv      int
}

// event is one batch of tokens: content, or a piece of one tool call.
type event struct {
	content string
	call    int    // index into plan.calls, -1 for content
	header  bool   // the call's first event: id and name
	args    string // a piece of the call's arguments
	tokens  int
}

// events cuts the plan into batches of k tokens.
func (p plan) events(k int) []event {
	var out []event
	for i := 0; i < len(p.content); i += k {
		j := min(i+k, len(p.content))
		out = append(out, event{content: strings.Join(p.content[i:j], ""), call: -1, tokens: j - i})
	}
	for ci, c := range p.calls {
		out = append(out, event{call: ci, header: true, tokens: 1})
		for i := 0; i < len(c.args); i += k {
			j := min(i+k, len(c.args))
			out = append(out, event{call: ci, args: strings.Join(c.args[i:j], ""), tokens: j - i})
		}
	}
	return out
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

// produce decodes k tokens: it books them and waits the time they take at
// the rate the stream gets now.
func (a *answer) produce(ctx context.Context, k int) error {
	dt := a.e.decodeStep(a.m, k)
	a.decoded += dt
	a.kv += k
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

// stream answers with server-sent events. It returns whether the reply
// ended whole and well-formed.
func (a *answer) stream(ctx context.Context, w http.ResponseWriter) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	id, created := a.id(), time.Now().Unix()
	base := chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: a.req.Model}
	buf := make([]byte, 0, 512)
	send := func(c chunk) error {
		body, err := json.Marshal(c)
		if err != nil {
			return err
		}
		buf = append(append(append(buf[:0], "data: "...), body...), "\n\n"...)
		return a.flush(w, rc, buf)
	}
	empty := ""
	c := base
	c.Choices = []chunkChoice{{Delta: delta{Role: "assistant", Content: &empty}}}
	if send(c) != nil {
		return false
	}
	a.e.beginDecode(a.m, a.prompt)
	defer func() { a.e.endDecode(a.m, a.prompt+a.kv) }()

	evs := a.plan.events(a.eventTokens())
	half := len(evs) / 2
	for i, ev := range evs {
		if a.fault == faultCut && i == max(half, 1) {
			a.cut(rc)
		}
		if a.fault == faultMalformed && i == half {
			if a.flush(w, rc, []byte("data: {not json\n\n")) != nil {
				return false
			}
		}
		if a.produce(ctx, ev.tokens) != nil {
			return false
		}
		c := base
		c.Choices = []chunkChoice{{Delta: a.delta(ev)}}
		if send(c) != nil {
			return false
		}
	}
	switch {
	case a.fault == faultCut: // too short to cut inside: cut before the end
		a.cut(rc)
	case a.fault == faultMalformed && len(evs) == 0:
		if a.flush(w, rc, []byte("data: {not json\n\n")) != nil {
			return false
		}
	}
	finish := a.plan.finish
	c = base
	c.Choices = []chunkChoice{{Delta: delta{}, FinishReason: &finish}}
	last := &c
	var u chunk
	if so := a.req.StreamOptions; so != nil && so.IncludeUsage {
		if send(c) != nil {
			return false
		}
		u = base
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

// delta is the chunk delta of one event.
func (a *answer) delta(ev event) delta {
	if ev.call < 0 {
		c := ev.content
		return delta{Content: &c}
	}
	idx := ev.call
	tc := wireToolCall{Index: &idx, Function: wireCallFunc{Arguments: ev.args}}
	if ev.header {
		pc := a.plan.calls[ev.call]
		tc.ID, tc.Type, tc.Function.Name = pc.id, "function", pc.name
	}
	return delta{ToolCalls: []wireToolCall{tc}}
}

// respond answers with one JSON completion after decoding it all. It
// returns whether the reply ended whole and well-formed.
func (a *answer) respond(ctx context.Context, w http.ResponseWriter) bool {
	a.e.beginDecode(a.m, a.prompt)
	defer func() { a.e.endDecode(a.m, a.prompt+a.kv) }()
	for _, ev := range a.plan.events(a.eventTokens()) {
		if a.produce(ctx, ev.tokens) != nil {
			return false
		}
	}
	msg := outMessage{Role: "assistant"}
	if content := strings.Join(a.plan.content, ""); content != "" || len(a.plan.calls) == 0 {
		msg.Content = &content
	}
	for _, c := range a.plan.calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: c.id, Type: "function",
			Function: wireCallFunc{Name: c.name, Arguments: strings.Join(c.args, "")}})
	}
	out := completion{
		ID: a.id(), Object: "chat.completion", Created: time.Now().Unix(), Model: a.req.Model,
		Choices: []completionChoice{{Message: msg, FinishReason: a.plan.finish}},
		Usage:   *a.usage(),
		Timings: a.timings(),
	}
	body, err := json.Marshal(out)
	if err != nil {
		return false
	}
	switch a.fault {
	case faultMalformed: // a body that ends before the JSON does
		body = body[:len(body)/2]
	case faultCut: // promise the whole body, send half, and drop the connection
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	writeJSONBytes(w, http.StatusOK, body)
	return a.fault == faultNone
}

func (a *answer) usage() *usage {
	return &usage{PromptTokens: a.prompt, CompletionTokens: a.plan.tokens, TotalTokens: a.prompt + a.plan.tokens}
}

// timings is llama.cpp's speed report, in simulated time; other backends
// send none.
func (a *answer) timings() *timings {
	if a.s.cfg.Spec.Backend != BackendLlamaCpp {
		return nil
	}
	t := &timings{PromptN: a.prompt, PredictedN: a.plan.tokens}
	t.PromptMS = float64(a.prefill) / float64(time.Millisecond)
	t.PredictedMS = float64(a.decoded) / float64(time.Millisecond)
	if t.PromptN > 0 && t.PromptMS > 0 {
		t.PromptPerTokenMS = t.PromptMS / float64(t.PromptN)
		t.PromptPerSecond = 1000 / t.PromptPerTokenMS
	}
	if t.PredictedN > 0 && t.PredictedMS > 0 {
		t.PredictedPerTokenMS = t.PredictedMS / float64(t.PredictedN)
		t.PredictedPerSecond = 1000 / t.PredictedPerTokenMS
	}
	return t
}

// id names the completion; unlike its content it need not repeat.
func (a *answer) id() string {
	return fmt.Sprintf("chatcmpl-%016x", splitmix64(a.s.ids.Add(1)^a.s.idBase))
}
