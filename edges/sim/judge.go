package sim

import (
	"fmt"
	"math/rand/v2"
	"pitwall/gpu/simspec"
	"strings"
)

// judgeTask is what a judge prompt asks: pitwall's judge templates fence
// the criteria, the reference and the candidate's output in these blocks.
type judgeTask struct {
	criteria  string
	reference string
	candidate string
}

// parseJudgePrompt finds the judge blocks in a user message: the candidate
// and at least one of criteria and reference (a missing reference reads as
// "(none)"). The candidate
// block is found first (its first opening tag to its last closing tag), and
// the others only outside it, so that a candidate cannot forge them.
func parseJudgePrompt(s string) (judgeTask, bool) {
	const open, closing = "<candidate_output>", "</candidate_output>"
	i := strings.Index(s, open)
	j := strings.LastIndex(s, closing)
	if i < 0 || j < i {
		return judgeTask{}, false
	}
	outside := s[:i] + s[j+len(closing):]
	crit, okC := block(outside, "criteria")
	ref, okR := block(outside, "reference")
	if !okC && !okR {
		return judgeTask{}, false
	}
	return judgeTask{
		criteria:  strings.TrimSpace(crit),
		reference: strings.TrimSpace(ref),
		candidate: strings.TrimSpace(s[i+len(open) : j]),
	}, true
}

// block returns the text inside <tag>…</tag>.
func block(s, tag string) (string, bool) {
	open, closing := "<"+tag+">", "</"+tag+">"
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, closing)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// judgeTruth is the right verdict and what the judge observed: the
// candidate does what the reference expects (see expectation); with no
// reference, the candidate is a real attempt.
func judgeTruth(t judgeTask) (bool, string) {
	e, ok := parseExpectation(t.reference)
	if !ok {
		switch {
		case strings.TrimSpace(t.candidate) == "":
			return false, "The candidate output is empty."
		case isRefusal(t.candidate):
			return false, "The candidate refused to answer."
		}
		return true, "The candidate gives a substantive answer to the request."
	}
	return e.meets(t.candidate)
}

// isRefusal spots the usual ways a model declines.
func isRefusal(s string) bool {
	n := normalize(s)
	for _, p := range []string{"i'm sorry, but i can't", "i can't help with", "i cannot help with", "i can't assist", "i cannot assist", "i am unable to help"} {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// judgeReply grades the candidate: a few lines of reasoning (inside <think>
// for thinking models), then the VERDICT and SCORE lines. With
// JudgeErrorRate it gets the verdict wrong: the first draw of rng, which
// the request hash seeds (model, messages, seed, temperature, server seed),
// decides, so a judge's verdict on an input and a sample is fixed, k
// samples (k seeds) can disagree, and over many answers the share it gets
// wrong is JudgeErrorRate within binomial sampling error: exactly 0 or all
// at the rates 0 and 1. That is what makes judge qualification testable.
func judgeReply(ms simspec.Model, t judgeTask, rng *rand.Rand) reply {
	truth, seen := judgeTruth(t)
	pass := truth
	if rng.Float64() < ms.JudgeErrorRate {
		pass = !truth
		seen = misread(pass)
	}
	var steps strings.Builder
	fmt.Fprintf(&steps, "1. The criteria ask: %s\n", oneLine(t.criteria, 160))
	if t.reference == "" || t.reference == "(none)" {
		steps.WriteString("2. There is no reference answer, so I check that the output is a real attempt.\n")
	} else {
		fmt.Fprintf(&steps, "2. The reference answer is: %s\n", oneLine(t.reference, 160))
	}
	fmt.Fprintf(&steps, "3. %s\n", seen)
	if pass {
		steps.WriteString("4. Therefore the output meets the criteria.\n")
	} else {
		steps.WriteString("4. Therefore the output does not meet the criteria.\n")
	}
	verdict, score := "FAIL", 0.05+0.3*rng.Float64()
	if pass {
		verdict, score = "PASS", 0.75+0.25*rng.Float64()
	}
	var b strings.Builder
	if thinks(ms) {
		b.WriteString("<think>\nI need to grade the candidate output against the criteria.\n")
		b.WriteString(steps.String())
		b.WriteString("</think>\n\n")
		if pass {
			b.WriteString("The output meets the criteria.\n\n")
		} else {
			b.WriteString("The output does not meet the criteria.\n\n")
		}
	} else {
		b.WriteString("Let me evaluate step by step.\n")
		b.WriteString(steps.String())
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "VERDICT: %s\nSCORE: %.2f", verdict, score)
	return reply{content: b.String()}
}

// misread is what a judge that errs believes it saw.
func misread(pass bool) string {
	if pass {
		return "The candidate output appears to satisfy the reference."
	}
	return "The candidate output seems to miss what the reference requires."
}

// oneLine shortens s to one line of at most n bytes for quoting.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(none given)"
	}
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
