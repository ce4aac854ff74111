package sim

import (
	"encoding/json"
	"math/rand/v2"
	"pitwall/gpu/simspec"
	"sort"
	"strconv"
	"strings"
)

// wrongReply gives a plausible wrong answer: now and then empty or a
// refusal, otherwise a mistake of the kind the request invites. Where the
// request forces a call, the mistake is in the call: servers that honour
// tool_choice constrain the model to call, so text cannot come back.
func wrongReply(ms simspec.Model, a ask, ans Answer, rng *rand.Rand) reply {
	if !a.mustCall {
		switch v := rng.Float64(); {
		case v < 0.07:
			return reply{}
		case v < 0.15:
			return reply{content: refusal}
		}
	}
	switch {
	case a.mayCall(ans.ToolName):
		right := toolCall{name: ans.ToolName, args: marshalArgs(ans.ToolArgs)}
		return wrongCall(a, right, ans.ToolArgs, rng)
	case a.mustCall:
		return wrongCall(a, schemaCall(a).calls[0], nil, rng)
	case ans.JSON || a.wantJSON:
		return reply{content: wrongJSON(jsonAnswer(ans.Content), rng)}
	}
	if a.canCall && rng.IntN(4) == 0 {
		return schemaCall(a) // a tool call nobody asked for
	}
	content := wrongText(ans.Content, rng)
	if full := padded(content, ms, rng); !containsNorm(full, ans.Content) {
		content = full
	}
	return reply{content: content}
}

// The mistakes a call can make.
const (
	otherFunction   = iota // the wrong function, with the right arguments
	wrongArguments         // the right function with wrong arguments
	brokenArguments        // arguments that are not JSON
	textInstead            // text where a call was needed
)

// wrongCall is a mistaken function call, or text where a call was needed.
// It calls only functions that were offered, calls another function only
// when tool_choice names none, and answers in text only when no call is
// forced.
func wrongCall(a ask, right toolCall, args map[string]any, rng *rand.Rand) reply {
	var others []string
	if a.forceFunc == "" {
		for _, t := range a.req.Tools {
			if n := t.Function.Name; n != right.name {
				others = append(others, n)
			}
		}
	}
	kinds := []int{wrongArguments, brokenArguments}
	if len(others) > 0 {
		kinds = append(kinds, otherFunction)
	}
	if !a.mustCall {
		kinds = append(kinds, textInstead)
	}
	switch kinds[rng.IntN(len(kinds))] {
	case otherFunction:
		return reply{calls: []toolCall{{name: others[rng.IntN(len(others))], args: right.args}}}
	case wrongArguments:
		if args == nil {
			_ = json.Unmarshal([]byte(right.args), &args)
		}
		return reply{calls: []toolCall{{name: right.name, args: marshalArgs(wrongArgs(args, rng))}}}
	case brokenArguments:
		return reply{calls: []toolCall{{name: right.name, args: strings.TrimSuffix(right.args, "}")}}}
	}
	return reply{content: "To answer that I would need to use " + right.name +
		", but I can tell you what I know without it. " + sentences(rng, 30)}
}

// wrongArgs changes, drops or invents one argument.
func wrongArgs(args map[string]any, rng *rand.Rand) map[string]any {
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	if len(out) == 0 {
		out["query"] = "something else"
		return out
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	k := keys[rng.IntN(len(keys))]
	if len(keys) > 1 && rng.IntN(3) == 0 {
		delete(out, k)
		return out
	}
	out[k] = wrongValue(out[k], rng)
	return out
}

// wrongValue is a different value of the same kind.
func wrongValue(v any, rng *rand.Rand) any {
	switch x := v.(type) {
	case string:
		return wrongText(x, rng)
	case float64:
		return x + float64(1+rng.IntN(9))
	case int:
		return x + 1 + rng.IntN(9)
	case bool:
		return !x
	}
	return "unknown"
}

// distractors replace a word of a right answer to make a wrong one.
var distractors = []string{"Paris", "blue", "Kyoto", "London", "Mars", "green", "Berlin",
	"Python", "river", "Monday", "copper", "Lisbon", "winter", "Oslo", "seven"}

// wrongText changes a right textual answer into a plausible wrong one that
// does not contain it: another number, another word, or a hedge.
func wrongText(right string, rng *rand.Rand) string {
	var cands []string
	if i, j, ok := firstNumber(right); ok {
		n := right[i:j]
		cands = append(cands, right[:i]+bump(n, 1+rng.IntN(9))+right[j:])
	}
	if w := longestWord(right); w != "" {
		d := distractor(w, rng)
		cands = append(cands, strings.Replace(right, w, d, 1))
	}
	d := distractors[rng.IntN(len(distractors))]
	cands = append(cands,
		"I'm not certain, but I believe the answer is "+d+".",
		"I don't know.",
		"No.")
	for _, c := range cands {
		if right == "" || !containsNorm(c, right) {
			return c
		}
	}
	return ""
}

// firstNumber finds the first run of digits in s.
func firstNumber(s string) (i, j int, ok bool) {
	i = strings.IndexAny(s, "0123456789")
	if i < 0 {
		return 0, 0, false
	}
	j = i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return i, j, true
}

// bump adds d to a decimal number's text, keeping it a number.
func bump(n string, d int) string {
	v := 0
	for _, c := range n {
		v = v*10 + int(c-'0')
		if v > 1e8 {
			return n + "1"
		}
	}
	return strconv.Itoa(v + d)
}

// longestWord is the longest alphabetic word of s, at least 3 letters.
func longestWord(s string) string {
	best := ""
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if len(w) > len(best) && len(w) >= 3 {
			best = w
		}
	}
	return best
}

// distractor is a word other than w, capitalised like it.
func distractor(w string, rng *rand.Rand) string {
	for {
		d := distractors[rng.IntN(len(distractors))]
		if strings.EqualFold(d, w) {
			continue
		}
		if w[0] >= 'a' && w[0] <= 'z' {
			return strings.ToLower(d)
		}
		return d
	}
}

// wrongJSON spoils a right JSON answer: broken syntax, a wrong value, or
// JSON wrapped in a fence or in prose.
func wrongJSON(right string, rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return strings.TrimSuffix(strings.TrimSpace(right), "}") + ",}"
	case 1:
		var obj map[string]any
		if json.Unmarshal([]byte(right), &obj) == nil {
			return marshalArgs(wrongArgs(obj, rng))
		}
		return "{" + right
	case 2:
		return "```json\n" + right + "\n```"
	}
	return "Sure! Here is the JSON you asked for:\n" + right
}
