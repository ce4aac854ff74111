package runner

import (
	"pitwall/gpu/chat"
)

// judgePrice is a judge's dollars per million prompt and completion
// tokens: its own price_in/price_out, else its model's in [prices].
func (r *Run) judgePrice(name string) (in, out float64, ok bool) {
	j := r.judges[name]
	if j.PriceIn != 0 || j.PriceOut != 0 {
		return j.PriceIn, j.PriceOut, true
	}
	if p, found := r.cfg.Prices[j.Model]; found {
		return p.In, p.Out, true
	}
	return 0, 0, false
}

// spentJudging counts a judge request that went out and came back (or
// failed): the header shows judging's spending apart, as it goes. A
// request cancelled before it was answered spent nothing it reports.
func (j *judgingPart) spentJudging(a *judgeAttempt, res chat.Result, err error) {
	if a.judge == nil || a.row == nil {
		return
	}
	if chat.ClassOf(err) == chat.ClassCanceled && res.PromptTokens == 0 && res.CompletionTokens == 0 {
		return
	}
	s := &j.e.totals.judging
	if s.Requests == 0 {
		s.Priced = true
	}
	s.Requests++
	s.PromptTokens += int64(res.PromptTokens)
	s.CompletionTokens += int64(res.CompletionTokens)
	if in, out, ok := j.e.r.judgePrice(a.judge.judge); ok {
		s.Cost += (in*float64(res.PromptTokens) + out*float64(res.CompletionTokens)) / 1e6
	} else {
		s.Priced = false
	}
}
