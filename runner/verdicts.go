package runner

import (
	"cmp"
	"fmt"
	"pitwall/config"
	"pitwall/judge"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// How a judge's samples become verdicts on a cell, and the jury's.

func sampleVerdict(s scoring.Sample) string {
	switch {
	case s.ParseErr != "":
		return string(scoring.Error)
	case s.Pass:
		return string(scoring.Pass)
	default:
		return string(scoring.Fail)
	}
}

func judgeWeight(j config.Judge) float64 {
	if j.Weight <= 0 {
		return 1
	}
	return j.Weight
}

// conclude votes one judge's samples on a cell, and the jury when every
// judge has spoken, and returns the verdict rows to record.
func (jg *judgingPart) conclude(j *judgeJob, tl *tally, source string) []ledger.VerdictRow {
	r := jg.e.r
	sc := r.cfg.Scoring
	res := judge.Vote(j.judge, judgeWeight(r.judges[j.judge]), tl.samples, sc.MinScore)
	samples, clipped := clipSamples(res.Samples)
	jd := &state.Judgment{Judge: j.judge, Status: state.JudgmentDone, Verdict: res.Verdict, Score: res.Score,
		Agreement: res.Agreement, Samples: samples, Latency: tl.latency, Source: source}
	if res.Verdict == scoring.Error {
		jd.Error = cmp.Or(joinErrs(tl.errs), firstParseErr(tl.samples), "the judge gave no verdict")
	}
	c := jg.e.table.edit(j.cell)
	state.SetJudgment(c, jd)
	c.Clipped = c.Clipped || clipped
	out := []ledger.VerdictRow{jg.verdictRow(c, jd, mustJSON(res))}
	if len(sc.Judges) < 2 {
		return out
	}
	var all []scoring.JudgeResult
	for _, cj := range sc.Judges {
		g := c.Judgment(cj.Name)
		if g == nil || g.Status != state.JudgmentDone {
			return out
		}
		all = append(all, scoring.JudgeResult{Judge: cj.Name, Weight: judgeWeight(cj), Samples: g.Samples,
			Score: g.Score, Agreement: g.Agreement, Verdict: g.Verdict})
	}
	jury := judge.AggregateWith(all, sc.Aggregation, sc.DisagreementMax, sc.MinScore)
	verdict := jury.Verdict
	if !sc.ReportDisagreement && jury.Decision != "" {
		verdict = jury.Decision // disagreement is reported only when asked for
	}
	jj := &state.Judgment{Judge: scoring.JuryName, Status: state.JudgmentDone, Verdict: verdict, Score: jury.Score,
		Agreement: jury.Agreement, Jury: &jury, Source: source}
	state.SetJudgment(c, jj)
	return append(out, jg.verdictRow(c, jj, mustJSON(jury)))
}

func joinErrs(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	s := errs[0]
	if len(errs) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return s
}

func firstParseErr(samples []scoring.Sample) string {
	for _, s := range samples {
		if s.ParseErr != "" {
			return s.ParseErr
		}
	}
	return ""
}

func (jg *judgingPart) verdictRow(c *state.Cell, j *state.Judgment, detail string) ledger.VerdictRow {
	return ledger.VerdictRow{RunID: jg.e.r.id, Model: c.Model, Test: c.Test, Repeat: c.Repeat, Judge: j.Judge,
		Verdict: string(j.Verdict), Score: j.Score, Agreement: j.Agreement, Detail: detail, Error: j.Error,
		Source: j.Source, LatencyMS: j.Latency.Milliseconds(), At: jg.e.r.now()}
}
