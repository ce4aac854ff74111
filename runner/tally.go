package runner

import (
	"fmt"
	"pitwall/gpu/chat"
	"pitwall/judge"
	"pitwall/judge/scoring"
	"pitwall/runner/state"
	"time"
)

// tally collects the k samples of one judge on one cell in one round.
type tally struct {
	round   int
	samples []scoring.Sample
	got     int
	errs    []string
	latency time.Duration // the slowest sample's request: judge time, not queueing
	// prev and prevJury are the verdicts a re-judge replaces: they stay
	// until the new ones are in, and come back if the re-judge is cancelled.
	prev, prevJury *state.Judgment
}

// tallyKey is one judge's tally of one cell.
type tallyKey struct {
	cell  cellPos
	judge string
}

// readSample reads a judge's answer about candidate (the reply as the
// server gave it) as one sample; a failed request reads as none (its error
// is the tally's to note). A cut answer is no verdict, whatever its last
// line says, and a line that is the candidate's own is not the judge's
// (judge.ParseReplyFor).
func readSample(candidate string, res chat.Result, err error, maxTokens int) scoring.Sample {
	if err != nil {
		return scoring.Sample{}
	}
	sample := judge.ParseReplyFor(candidate, res.Content, res.FinishReason, maxTokens)
	if res.Reasoning != "" && sample.Reasoning == "" {
		sample.Reasoning = res.Reasoning
	}
	return sample
}

// add puts sample i in the tally (a failed request as a sample that says
// why) and reports whether every sample is in.
func (tl *tally) add(i int, sample scoring.Sample, res chat.Result, err error) bool {
	if err != nil {
		tl.errs = append(tl.errs, fmt.Sprintf("sample %d: %s", i+1, chat.MessageOf(err)))
		sample = scoring.Sample{ParseErr: "judge request failed: " + chat.MessageOf(err)}
	}
	tl.samples[i] = sample
	tl.latency = max(tl.latency, res.Latency)
	tl.got++
	return tl.got == len(tl.samples)
}

// restore gives cell c back the verdicts of judge name it had before the
// tally's round began, or none: a stopped judgment is not a verdict.
func (tl *tally) restore(c *state.Cell, name string) {
	if tl.prev != nil {
		state.SetJudgment(c, tl.prev)
	} else {
		state.DropJudgments(c, name)
	}
	if tl.prevJury != nil && c.Judgment(scoring.JuryName) == nil {
		state.SetJudgment(c, tl.prevJury)
	}
}
