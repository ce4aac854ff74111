package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// respond answers with one JSON completion after decoding it all. It
// returns whether the reply ended whole and well-formed.
func (a *answer) respond(ctx context.Context, w http.ResponseWriter) bool {
	a.e.beginDecode(a.m, a.prompt, len(a.plans))
	defer func() { a.e.endDecode(a.m, len(a.plans), a.prompt+a.kv) }()
	d := dialectOf(a.s.cfg.Spec.Backend)
	for _, round := range rounds(a.plans, a.eventTokens(), d.ollamaChunks) {
		if a.produce(ctx, round) != nil {
			return false
		}
	}
	openai := a.s.cfg.Spec.Backend == BackendOpenAI
	out := completion{
		ID: a.id(), Object: "chat.completion", Created: time.Now().Unix(), Model: a.req.Model,
		SystemFingerprint: a.s.systemFingerprint(a.req.Model),
		Choices:           make([]completionChoice, 0, len(a.plans)),
		Usage:             *a.usage(),
		Timings:           a.timings(),
	}
	if openai {
		out.ServiceTier = "default"
	}
	for i, p := range a.plans {
		msg := outMessage{Role: "assistant"}
		if content := strings.Join(p.content, ""); content != "" || len(p.calls) == 0 || d.ollamaChunks {
			msg.Content = &content
		}
		if openai {
			msg.Refusal = jsonNull
		}
		for k, c := range p.calls {
			tc := wireToolCall{ID: c.id, Type: "function", Function: wireCallFunc{Name: c.name, Arguments: strings.Join(c.args, "")}}
			if d.ollamaChunks {
				tc.Index = &k
			}
			msg.ToolCalls = append(msg.ToolCalls, tc)
		}
		out.Choices = append(out.Choices, completionChoice{Index: i, Message: msg, FinishReason: p.finish})
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

// completionTokens is the tokens of every choice together.
func (a *answer) completionTokens() int {
	n := 0
	for _, p := range a.plans {
		n += p.tokens
	}
	return n
}

// usage counts the prompt once and the completions of every choice.
func (a *answer) usage() *usage {
	c := a.completionTokens()
	return &usage{PromptTokens: a.prompt, CompletionTokens: c, TotalTokens: a.prompt + c}
}

// timings is llama.cpp's speed report, in simulated time; other backends
// send none.
func (a *answer) timings() *timings {
	if a.s.cfg.Spec.Backend != BackendLlamaCpp {
		return nil
	}
	t := &timings{PromptN: a.prompt, PredictedN: a.completionTokens()}
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
