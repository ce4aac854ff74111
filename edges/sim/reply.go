package sim

import (
	"encoding/json"
	"math/rand/v2"
	"pitwall/gpu/simspec"
	"sort"
	"strings"
)

// refusal is the canned refusal that wrong replies sometimes are.
const refusal = "I'm sorry, but I can't help with that."

// toolCall is one function call of a reply.
type toolCall struct {
	name string
	args string // JSON text, maybe invalid on purpose
}

// reply is what a model answers, before max_tokens cuts it.
type reply struct {
	content string
	calls   []toolCall
}

// ask is what the request asks of the model's reply, as the backend reads
// it (see dialect: Ollama ignores tool_choice, llama-server ignores a named
// function).
type ask struct {
	req       *chatRequest
	canCall   bool   // tools offered, tool_choice not "none", not answering a tool result
	mustCall  bool   // tool_choice "required" or a named function
	forceFunc string // the named function of tool_choice
	afterTool string // the tool result being answered, when the last message is one
	wantJSON  bool
}

func newAsk(req *chatRequest, d dialect) ask {
	a := ask{req: req, wantJSON: req.wantsJSON()}
	if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
		a.afterTool = last.text
	}
	mode, fn := effectiveToolChoice(d, req)
	a.canCall = len(req.Tools) > 0 && mode != "none" && a.afterTool == "" && !(mode == "function" && req.tool(fn) == nil)
	a.mustCall = a.canCall && (mode == "required" || mode == "function")
	if a.canCall && mode == "function" {
		a.forceFunc = fn
	}
	return a
}

// tool returns the offered tool named name, or nil.
func (r *chatRequest) tool(name string) *wireTool {
	for i := range r.Tools {
		if r.Tools[i].Function.Name == name {
			return &r.Tools[i]
		}
	}
	return nil
}

// mayCall reports whether the reply may call the function name: it is
// offered, and tool_choice names no other. A model cannot call a tool it
// was not given.
func (a ask) mayCall(name string) bool {
	return a.canCall && name != "" && a.req.tool(name) != nil && (a.forceFunc == "" || a.forceFunc == name)
}

// compose is the deterministic reply of a model to a request, for one of
// its choices: a judge's verdict for a judge prompt; the oracle's answer,
// right or wrong by the model's skill, for a battery prompt; a generic
// reply otherwise. Choice 0 is the reply a request with no n gets; the
// others are further samples.
func (s *Server) compose(ms simspec.Model, req *chatRequest, choice int) reply {
	h := requestHash(ms.Name, req, s.cfg.Seed)
	if choice > 0 {
		h = splitmix64(h ^ uint64(choice))
	}
	rng := newRand(h)
	last := req.lastUser()
	if t, ok := parseJudgePrompt(last); ok {
		return judgeReply(ms, t, rng)
	}
	a := newAsk(req, dialectOf(s.cfg.Spec.Backend))
	if r, ok := agentTurn(ms, a, s.cfg.Answers[last], rng); ok {
		return r
	}
	ans, ok := s.cfg.Answers[last]
	if !ok {
		return genericReply(ms, a, last, rng)
	}
	if rng.Float64() < skillFor(ms, ans.Category) {
		return rightReply(ms, a, ans, last, rng)
	}
	return wrongReply(ms, a, ans, rng)
}

// rightReply gives the oracle's answer in the form the request asks: the
// oracle's call when it may make it, else a call of the function the
// request forces, built from its schema.
func rightReply(ms simspec.Model, a ask, ans Answer, prompt string, rng *rand.Rand) reply {
	switch {
	case a.mayCall(ans.ToolName):
		return reply{calls: []toolCall{{name: ans.ToolName, args: marshalArgs(ans.ToolArgs)}}}
	case a.mustCall:
		return schemaCall(a)
	case ans.JSON || a.wantJSON:
		return reply{content: schemaAnswer(a.req, jsonAnswer(ans.Content))}
	case ans.Content == "":
		return genericReply(ms, a, prompt, rng)
	case ans.Exact:
		return reply{content: ans.Content}
	}
	return reply{content: padded(ans.Content, ms, rng)}
}

// jsonAnswer is content as a JSON object: itself when it is one.
func jsonAnswer(content string) string {
	t := strings.TrimSpace(content)
	var obj map[string]any
	if json.Unmarshal([]byte(t), &obj) == nil {
		return t
	}
	return marshalArgs(map[string]any{"answer": content})
}

// schemaAnswer fits a right JSON answer to the request's json_schema, as
// the servers' constrained decoding does: the answer's fields that the
// schema has, and plain values for the required fields it lacks, its text
// going to the first of those that is a string. Without a schema the
// answer is returned as it is.
func schemaAnswer(req *chatRequest, answer string) string {
	rf := req.ResponseFormat
	if rf == nil || rf.JSONSchema == nil || rf.JSONSchema.Schema == nil {
		return answer
	}
	schema := rf.JSONSchema.Schema
	props, _ := schema["properties"].(map[string]any)
	out := valuesFor(schema)
	var given map[string]any
	_ = json.Unmarshal([]byte(answer), &given) // jsonAnswer made it an object
	placed := false
	for k, v := range given {
		if _, ok := props[k]; ok {
			out[k], placed = v, true
		}
	}
	if !placed {
		text, _ := given["answer"].(string)
		for _, k := range sortedKeys(out) {
			if p, _ := props[k].(map[string]any); p["type"] == "string" && p["enum"] == nil && text != "" {
				out[k] = text
				break
			}
		}
	}
	return marshalArgs(out)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// genericReply answers a prompt the oracle does not know: a call built from
// the tool's schema when a call is required, JSON when asked, text else.
func genericReply(ms simspec.Model, a ask, prompt string, rng *rand.Rand) reply {
	switch {
	case a.mustCall:
		return schemaCall(a)
	case a.afterTool != "":
		return reply{content: "Based on the tool result: " + firstWords(a.afterTool, 40)}
	case a.wantJSON:
		return reply{content: schemaJSON(a.req, rng)}
	}
	topic := firstWords(prompt, 8)
	if topic == "" {
		topic = "your request"
	}
	return reply{content: padded("Here is a short answer about "+topic+".", ms, rng)}
}

// schemaCall calls the forced function (or the first tool) with
// arguments built from its parameter schema.
func schemaCall(a ask) reply {
	t := &a.req.Tools[0]
	if a.forceFunc != "" {
		t = a.req.tool(a.forceFunc) // newAsk sets forceFunc only to an offered tool
	}
	return reply{calls: []toolCall{{name: t.Function.Name, args: marshalArgs(valuesFor(t.Function.Parameters))}}}
}

// schemaJSON is a JSON object for a json_schema response format, or a
// generic one.
func schemaJSON(req *chatRequest, rng *rand.Rand) string {
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil && rf.JSONSchema.Schema != nil {
		return marshalArgs(valuesFor(rf.JSONSchema.Schema))
	}
	return marshalArgs(map[string]any{"response": sentences(rng, 12)})
}

// valuesFor builds an object that satisfies a JSON schema's required
// properties (or all of them when none is required) with plain values.
func valuesFor(schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	out := map[string]any{}
	names := []string{}
	if req, ok := schema["required"].([]any); ok && len(req) > 0 {
		for _, r := range req {
			if n, ok := r.(string); ok {
				names = append(names, n)
			}
		}
	} else {
		for n := range props {
			names = append(names, n)
		}
	}
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		out[n] = valueFor(p)
	}
	return out
}

func valueFor(p map[string]any) any {
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch p["type"] {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return valuesFor(p)
	}
	return "example"
}

// marshalArgs renders arguments as compact JSON with sorted keys.
func marshalArgs(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// firstWords is the first n words of s, on one line.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		w = w[:n]
	}
	return strings.Join(w, " ")
}

// padded follows core with explanatory sentences so that the reply's length
// varies around the model's ReplyTokens.
func padded(core string, ms simspec.Model, rng *rand.Rand) string {
	target := int(float64(ms.ReplyTokens) * (0.6 + 0.8*rng.Float64()))
	rest := target - countTokens(core)
	if rest <= 0 {
		return core
	}
	return core + "\n\n" + sentences(rng, rest)
}

// filler is explanatory text without digits or answers in it.
var filler = []string{
	"This follows from the details given in the question.",
	"I checked each part of the request before answering.",
	"Let me know if you would like more context on any of this.",
	"The reasoning is straightforward once the key facts are laid out.",
	"In short, the question has a clear answer.",
	"There are a few caveats, but they do not change the conclusion.",
	"A careful reading of the prompt supports this.",
	"I have kept the explanation brief on purpose.",
	"If anything is unclear, I am happy to expand on it.",
	"The same approach works for similar questions.",
	"It helps to consider the problem step by step.",
	"Most sources agree on this point.",
	"One could phrase it differently, but the substance is the same.",
	"I considered the alternatives and this one fits best.",
	"The explanation above should cover the main points.",
	"Edge cases are rare here and unlikely to matter.",
}

// sentences is about n tokens of filler.
func sentences(rng *rand.Rand, n int) string {
	var b strings.Builder
	for c := 0; c < n; {
		f := filler[rng.IntN(len(filler))]
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
		c += countTokens(f)
	}
	return b.String()
}

// normalize lowercases s and collapses its whitespace, for comparisons.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// containsNorm reports whether s contains sub, normalised.
func containsNorm(s, sub string) bool {
	return strings.Contains(normalize(s), normalize(sub))
}
