package refgen

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"
)

// Model is one model of the reference fleet, in the simulator's terms.
type Model struct {
	Name         string
	SizeGB       float64
	TokensPerSec float64 // single-stream decode rate
	PrefillTPS   float64
	TTFT         time.Duration
	ReplyTokens  int // typical reply; the simulator varies it by ±40%
	Skill        float64
	// JudgeErrorRate is, for a judge model, the chance of a wrong verdict.
	JudgeErrorRate float64
}

// Test is one battery test.
type Test struct {
	ID        string
	Category  string
	User      string
	Criteria  string
	Reference string
}

// Fleet is the whole reference scenario.
type Fleet struct {
	Name       string
	Servers    []string // one simulated GPU each
	Slots      int
	VRAMGB     float64
	LoadGBps   float64
	Candidates []Model
	Judges     []Model
	Tests      []Test
	Judging    string
	Seed       int
}

// JudgeTemplateTokens is roughly what a judge template adds around the
// prompt, the candidate's reply, the criteria and the reference.
const JudgeTemplateTokens = 160

// Reference is the reference scenario. It is fixed: the same value every time.
func Reference() Fleet {
	f := Fleet{
		Name:     "reference-fleet",
		Servers:  []string{"gpu0", "gpu1", "gpu2", "gpu3"},
		Slots:    2,
		VRAMGB:   24,
		LoadGBps: 0.5, // 5 GB loads in 10 s, 20 GB in 40 s
		Judging:  "two-phase",
		Seed:     42,
	}
	// Bigger models decode slower; the sizes make some pairs fit on one GPU
	// (5+19, 7+17, 10+14 ...) and kilo and lima only alone.
	for _, m := range []struct {
		name       string
		size, tps  float64
		reply      int
		skill      float64
		judgeError float64
	}{
		{"alpha-5g", 5, 120, 110, 0.60, 0},
		{"bravo-6g", 6, 105, 150, 0.65, 0},
		{"charlie-7g", 7, 95, 200, 0.70, 0},
		{"delta-8g", 8, 90, 130, 0.62, 0},
		{"echo-9g", 9, 80, 240, 0.72, 0},
		{"foxtrot-10g", 10, 70, 170, 0.75, 0},
		{"golf-12g", 12, 60, 220, 0.78, 0},
		{"hotel-13g", 13, 55, 120, 0.74, 0},
		{"india-15g", 15, 45, 180, 0.80, 0},
		{"juliet-17g", 17, 40, 270, 0.84, 0},
		{"kilo-19g", 19.5, 35, 150, 0.82, 0},
		{"lima-20g", 20, 30, 200, 0.88, 0},
	} {
		f.Candidates = append(f.Candidates, Model{Name: m.name, SizeGB: m.size, TokensPerSec: m.tps,
			PrefillTPS: 2000, TTFT: 200 * time.Millisecond, ReplyTokens: m.reply, Skill: m.skill})
	}
	// The two judges fit on one GPU together (22 GB).
	f.Judges = []Model{
		{Name: "judge-quick-8g", SizeGB: 8, TokensPerSec: 90, PrefillTPS: 2000, TTFT: 200 * time.Millisecond,
			ReplyTokens: 90, JudgeErrorRate: 0.10},
		{Name: "judge-deep-14g", SizeGB: 14, TokensPerSec: 60, PrefillTPS: 2000, TTFT: 200 * time.Millisecond,
			ReplyTokens: 90, JudgeErrorRate: 0.05},
	}
	f.Tests = tests(200, uint64(f.Seed))
	return f
}

// Models is every model of the fleet, candidates then judges.
func (f Fleet) Models() []Model {
	return append(append([]Model(nil), f.Candidates...), f.Judges...)
}

// Tokens counts simulated tokens the way the simulator does: each run of
// up to six non-space runes is a token.
func Tokens(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		n += (utf8.RuneCountInString(w) + 5) / 6
	}
	return n
}

// PromptTokens is the prompt of one inference request of t: a user message
// in a chat template.
func PromptTokens(t Test) int { return 7 + Tokens(t.User) }

// ReplyTokens is how long m's reply to t is: the simulator draws 60–140% of
// the model's typical length per request; here the draw comes from a hash of
// model and test, which gives the same spread.
func ReplyTokens(m Model, t Test) int {
	return int(float64(m.ReplyTokens) * (0.6 + 0.8*unit(m.Name+"\x00"+t.ID)))
}

// JudgePromptTokens is the prompt of a judge request on the cell (m, t).
func JudgePromptTokens(m Model, t Test) int {
	return JudgeTemplateTokens + Tokens(t.User) + ReplyTokens(m, t) + Tokens(t.Criteria) + Tokens(t.Reference)
}

// JudgeReplyTokens is how long a judge's answer is: a few lines of
// reasoning that quote the criteria and the reference, then the verdict.
func JudgeReplyTokens(t Test) int {
	return 45 + Tokens(t.Criteria) + Tokens(t.Reference)
}

// unit maps a string to [0,1) deterministically.
func unit(s string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s)) // hash writes never fail
	return float64(h.Sum64()>>11) / (1 << 53)
}

var (
	categories = []string{"reasoning", "extraction", "summary", "arithmetic"}
	subjects   = []string{"a warehouse inventory", "a train timetable", "a clinical trial", "a household budget",
		"a river's flow readings", "a chess tournament", "a bakery's orders", "a library loan log",
		"a solar farm's output", "a cycling race", "a school timetable", "a shipping manifest"}
	asks = map[string]string{
		"reasoning":  "Explain, step by step, which conclusion follows and why the others do not.",
		"extraction": "List every date, name and quantity that appears, one per line.",
		"summary":    "Summarize the situation in a short paragraph for a busy reader.",
		"arithmetic": "Compute the total and show the working.",
	}
)

// tests makes n tests of a few categories with prompts of 20–80 words.
func tests(n int, seed uint64) []Test {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]Test, n)
	for i := range out {
		cat := categories[i%len(categories)]
		subj := subjects[rng.IntN(len(subjects))]
		a, b, c := 2+rng.IntN(90), 2+rng.IntN(90), 2+rng.IntN(90)
		var u strings.Builder
		fmt.Fprintf(&u, "Consider %s. On Monday it records %d items, on Tuesday %d, and on Wednesday %d.", subj, a, b, c)
		for range rng.IntN(6) {
			fmt.Fprintf(&u, " A note from day %d adds that %d of them were checked twice and %d were set aside for review.",
				1+rng.IntN(3), rng.IntN(a+1), rng.IntN(b+1))
		}
		u.WriteString(" ")
		u.WriteString(asks[cat])
		out[i] = Test{
			ID:        fmt.Sprintf("ref-%03d", i+1),
			Category:  cat,
			User:      u.String(),
			Criteria:  fmt.Sprintf("The answer addresses %s and gets the three daily figures right.", subj),
			Reference: fmt.Sprintf("Monday %d, Tuesday %d, Wednesday %d; total %d.", a, b, c, a+b+c),
		}
	}
	return out
}
