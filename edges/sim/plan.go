package sim

import (
	"fmt"
	"math"
	"strings"
)

// plannedCall is a tool call cut into tokens for streaming.
type plannedCall struct {
	id   string
	name string
	args []string
}

// plan is one choice's reply cut into tokens and cut to max_tokens.
type plan struct {
	content []string
	calls   []plannedCall
	finish  string // stop | tool_calls | length
	tokens  int    // completion tokens
}

// planReply tokenises r and applies the max_tokens budget (0: none). A
// call's name costs one token; a call cut short keeps invalid arguments,
// as a real model's would. idOf names the i-th call.
func planReply(r reply, maxTokens int, idOf func(i int, c toolCall) string) plan {
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
		pc := plannedCall{id: idOf(i, c), name: c.name, args: splitTokens(c.args)}
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

// callIDs names the tool calls of one choice in the backend's shape. The
// id is derived from the choice, the call and the conversation's length
// (turn), not drawn, so that equal requests get equal replies, ids
// included, and a call repeated at a later turn of a loop gets an id of
// its own.
func callIDs(backend string, choice, turn int) func(i int, c toolCall) string {
	return func(i int, c toolCall) string {
		h := hashString(fmt.Sprintf("%d/%d/%s/%s", choice, i, c.name, c.args))
		if turn > 0 {
			h = splitmix64(h ^ uint64(turn)<<32)
		}
		switch backend {
		case BackendVLLM:
			return fmt.Sprintf("chatcmpl-tool-%016x%016x", splitmix64(h), splitmix64(h^1))
		case BackendOllama:
			return "call_" + strings.ToLower(alnum(h, 8))
		}
		return "call_" + alnum(h, 24)
	}
}

// alnum is n letters and digits drawn from seed.
func alnum(seed uint64, n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		seed = splitmix64(seed)
		b[i] = chars[seed%uint64(len(chars))]
	}
	return string(b)
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

// event is one batch of tokens of one choice: content, or a piece of one
// tool call.
type event struct {
	choice  int
	content string
	call    int    // index into the choice's plan.calls, -1 for content
	header  bool   // the call's first event: id and name
	args    string // a piece of the call's arguments
	tokens  int
}

// events cuts the plan into batches of k tokens; with wholeCalls a tool
// call is one event, as Ollama sends it.
func (p plan) events(choice, k int, wholeCalls bool) []event {
	var out []event
	for i := 0; i < len(p.content); i += k {
		j := min(i+k, len(p.content))
		out = append(out, event{choice: choice, content: strings.Join(p.content[i:j], ""), call: -1, tokens: j - i})
	}
	for ci, c := range p.calls {
		if wholeCalls {
			out = append(out, event{choice: choice, call: ci, header: true, args: strings.Join(c.args, ""), tokens: 1 + len(c.args)})
			continue
		}
		out = append(out, event{choice: choice, call: ci, header: true, tokens: 1})
		for i := 0; i < len(c.args); i += k {
			j := min(i+k, len(c.args))
			out = append(out, event{choice: choice, call: ci, args: strings.Join(c.args[i:j], ""), tokens: j - i})
		}
	}
	return out
}

// rounds cuts every choice into batches of k tokens and groups them: round
// r holds each choice's r-th batch, as the n sequences of one request
// decode side by side in one batch.
func rounds(plans []plan, k int, wholeCalls bool) [][]event {
	var out [][]event
	for ci, p := range plans {
		for r, ev := range p.events(ci, k, wholeCalls) {
			if r == len(out) {
				out = append(out, nil)
			}
			out[r] = append(out[r], ev)
		}
	}
	return out
}
