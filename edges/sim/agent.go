package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"pitwall/gpu/simspec"
)

// How a simulated model plays a tool loop. A request is a loop's turn when
// its last message is a tool result answering calls the model made after
// the last user message, and it still offers tools (tool_choice not
// "none"). The model's first turn is any other request's reply (compose):
// the oracle's call when it is right.
//
// Each later turn is drawn, deterministic for (model, conversation, seed),
// with the model's skill at tool loops (Skills["agent"], else its skill for
// the test's category):
//
//   - A right turn works through the opening call's result: the items it
//     lists (its lines, or the strings of a JSON array) are each handed to
//     the tools offered after the opening call's tool (to every other tool
//     when it is the last one), item by item and tool by tool, as a model
//     that lists a folder and then reads or moves each file would. A call
//     already made is not made again. With nothing left to do (or an
//     opening result that lists nothing, or an error), the model gives its
//     final answer: the oracle's answer, or a summary of the last result.
//   - A wrong turn repeats the model's last call word for word, and a model
//     whose last two calls are the same keeps repeating it: it stagnates,
//     as the loop's cycle detection is there to catch.

// agentSkillCategory is the category whose skill decides a model's turns
// after the first in a tool loop.
const agentSkillCategory = "agent"

// loopView is what a model has done in a tool loop so far.
type loopView struct {
	calls   []toolCall // the calls made since the last user message, in order
	results []string   // results[i] answers calls[i]
}

// readLoop reads the loop in a request's conversation; false when the
// request is not a loop's turn.
func readLoop(req *chatRequest) (loopView, bool) {
	msgs := req.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "tool" {
		return loopView{}, false
	}
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			start = i + 1
			break
		}
	}
	var v loopView
	byID := map[string]int{}
	for _, m := range msgs[start:] {
		switch m.Role {
		case "assistant":
			for _, c := range m.ToolCalls {
				if c.ID != "" {
					byID[c.ID] = len(v.calls)
				}
				v.calls = append(v.calls, toolCall{name: c.Function.Name, args: c.Function.Arguments})
				v.results = append(v.results, "")
			}
		case "tool":
			i, ok := byID[m.ToolCallID]
			if !ok {
				// A result that names no call answers the first one unanswered.
				i = -1
				for k := range v.results {
					if v.results[k] == "" {
						i = k
						break
					}
				}
			}
			if i >= 0 && i < len(v.results) {
				v.results[i] = m.text
			}
		}
	}
	return v, len(v.calls) > 0
}

// agentTurn is a model's turn in a tool loop; false when the request is
// not one (see readLoop), and compose answers it as any other.
func agentTurn(ms simspec.Model, a ask, ans Answer, rng *rand.Rand) (reply, bool) {
	req := a.req
	if mode, _ := req.toolChoice(); len(req.Tools) == 0 || mode == "none" {
		return reply{}, false
	}
	v, ok := readLoop(req)
	if !ok {
		if ans.Agent && ans.ToolName == "" {
			if c, ok := openingCall(req); ok {
				return reply{content: "Let me look first.", calls: []toolCall{c}}, true
			}
		}
		return reply{}, false
	}
	skill := skillFor(ms, ans.Category)
	if s, ok := ms.Skills[agentSkillCategory]; ok {
		skill = s
	}
	last := v.calls[len(v.calls)-1]
	stuck := len(v.calls) >= 2 && v.calls[len(v.calls)-2] == last
	if stuck || rng.Float64() >= skill {
		return reply{content: "Let me try that again.", calls: []toolCall{last}}, true
	}
	if next, item, ok := nextCall(req, v); ok {
		return reply{content: fmt.Sprintf("Next, %s for %s.", next.name, item), calls: []toolCall{next}}, true
	}
	return finalAnswer(ms, a, ans, v, rng), true
}

// nextCall is the first call of the work the opening call's result lists
// that the model has not made yet, and the item it is for.
func nextCall(req *chatRequest, v loopView) (toolCall, string, bool) {
	made := map[string]bool{}
	for _, c := range v.calls {
		made[c.name+"\x00"+canonicalArgs(c.args)] = true
	}
	if len(fsListing(v.results[0])) > 0 {
		return nextFileCall(req, v, made)
	}
	items := listedItems(v.results[0])
	if len(items) == 0 {
		return toolCall{}, "", false
	}
	for _, item := range items {
		for _, t := range downstreamTools(req, v.calls[0].name) {
			c, ok := callFor(t, item)
			if ok && !made[c.name+"\x00"+canonicalArgs(c.args)] {
				return c, item, true
			}
		}
	}
	return toolCall{}, "", false
}

// downstreamTools are the tools offered after the one named opening, or
// every other tool when it is the last offered (or not offered at all).
func downstreamTools(req *chatRequest, opening string) []*wireTool {
	var after, others []*wireTool
	seen := false
	for i := range req.Tools {
		t := &req.Tools[i]
		switch {
		case t.Function.Name == opening:
			seen = true
		case seen:
			after = append(after, t)
		default:
			others = append(others, t)
		}
	}
	if len(after) > 0 {
		return after
	}
	return others
}

// callFor calls tool with item as its first string parameter (required
// ones first, in the order the schema lists them, then the others by
// name) and plain values for its other required parameters; false when the
// tool takes no string.
func callFor(t *wireTool, item string) (toolCall, bool) {
	params := t.Function.Parameters
	props, _ := params["properties"].(map[string]any)
	var names []string
	if req, ok := params["required"].([]any); ok {
		for _, r := range req {
			if n, ok := r.(string); ok {
				names = append(names, n)
			}
		}
	}
	rest := make([]string, 0, len(props))
	for n := range props {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	names = append(names, rest...)
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		if p["type"] == "string" && p["enum"] == nil {
			args := valuesFor(params)
			args[n] = item
			return toolCall{name: t.Function.Name, args: marshalArgs(args)}, true
		}
	}
	return toolCall{}, false
}

// maxItems bounds the work one result can list.
const maxItems = 32

// listedItems are the things a tool result lists: the strings of a JSON
// array (or of the first array in a JSON object), else its non-empty lines
// when it has more than one. A line of prose ("3°C, cloudy"), a JSON
// object without a list, or an error lists nothing: the model answers.
func listedItems(result string) []string {
	result = strings.TrimSpace(result)
	if result == "" || strings.HasPrefix(strings.ToLower(result), "error") {
		return nil
	}
	var raw []string
	var v any
	if json.Unmarshal([]byte(result), &v) == nil {
		if obj, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(obj) {
				if arr, ok := obj[k].([]any); ok {
					v = arr
					break
				}
			}
		}
		arr, _ := v.([]any)
		for _, x := range arr {
			if s, ok := x.(string); ok {
				raw = append(raw, s)
			}
		}
	} else if lines := strings.Split(result, "\n"); len(lines) > 1 {
		raw = lines
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range raw {
		s = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "-*•"))
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
		if len(out) == maxItems {
			break
		}
	}
	return out
}

// canonicalArgs writes JSON arguments with sorted keys and no spacing, so
// that the same call written twice compares equal.
func canonicalArgs(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(b)
}

// finalAnswer ends a loop: the oracle's answer when there is one, in the
// form the request asks for, else what the last result said.
func finalAnswer(ms simspec.Model, a ask, ans Answer, v loopView, rng *rand.Rand) reply {
	switch {
	case ans.JSON || a.wantJSON:
		return reply{content: schemaAnswer(a.req, jsonAnswer(ans.Content))}
	case ans.Content == "":
		return reply{content: "Done. The last result was: " + firstWords(v.results[len(v.results)-1], 30)}
	case ans.Exact:
		return reply{content: ans.Content}
	}
	return reply{content: padded(ans.Content, ms, rng)}
}
