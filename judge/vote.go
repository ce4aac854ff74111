package judge

import (
	"math"
	"pitwall/judge/scoring"
	"sort"
	"strings"
)

// splitBelow is the agreement under which a judge's samples are a split vote.
// With 3 samples 2–1 is a decision (2/3) while with 2 samples 1–1 and with 5
// samples 3–2 (3/5) are splits: a judge that changes its mind that often
// has not decided.
const splitBelow = 2.0 / 3.0

// eps absorbs float rounding in comparisons of shares and scores.
const eps = 1e-9

// Vote turns one judge's k samples on a cell into its verdict.
//
// Samples that did not parse are kept but do not vote; when none parsed the
// verdict is scoring.Error. Of the rest: Score is the mean of their scores;
// Agreement is the share that agrees with the majority's pass/fail. A Score
// below minScore is scoring.Fail whatever the split: disagreement softens a
// pass, never a fail. Otherwise a split (Agreement below 2/3, which includes
// every tie) is scoring.Warn, and the verdict is scoring.Pass when the
// majority passed, and scoring.Fail when not.
func Vote(judgeName string, weight float64, samples []scoring.Sample, minScore float64) scoring.JudgeResult {
	r := scoring.JudgeResult{Judge: judgeName, Weight: weight, Samples: samples, Verdict: scoring.Error}
	n, passes, sum := 0, 0, 0.0
	for _, s := range samples {
		if s.ParseErr != "" {
			continue
		}
		n++
		sum += s.Score
		if s.Pass {
			passes++
		}
	}
	if n == 0 {
		return r
	}
	r.Score = sum / float64(n)
	r.Agreement = float64(max(passes, n-passes)) / float64(n)
	switch {
	case r.Score < minScore-eps:
		r.Verdict = scoring.Fail
	case r.Agreement < splitBelow-eps:
		r.Verdict = scoring.Warn
	case passes > n-passes:
		r.Verdict = scoring.Pass
	default:
		r.Verdict = scoring.Fail
	}
	return r
}

// Aggregation methods for a jury.
const (
	AggregateMean     = "mean"
	AggregateMedian   = "median"
	AggregateMajority = "majority"
	AggregateMin      = "min"
)

// DefaultMinScore is [scoring] min_score's default, the score Aggregate
// passes a jury at.
const DefaultMinScore = 0.5

// Aggregate is AggregateWith at DefaultMinScore.
func Aggregate(results []scoring.JudgeResult, method string, threshold float64) scoring.JuryResult {
	return AggregateWith(results, method, threshold, DefaultMinScore)
}

// AggregateWith combines several judges' results on one cell; minScore is
// [scoring] min_score.
//
// Judges whose verdict is scoring.Error take no part; when none is left the jury's
// verdict is scoring.Error. A weight of zero or less counts as 1 (config's default).
// Score is, by method, the weighted mean of the judges' scores ("mean", and
// any unknown method), their weighted median ("median"), the lowest of them
// ("min"), or the weighted share of judges whose verdict is scoring.Pass
// ("majority"). StdDev (weighted) and Spread (max − min) are over the
// judges' scores whatever the method.
//
// Disagreement is set when the judges' verdicts differ, or when threshold > 0
// and StdDev exceeds it. The jury's Decision is then:
//
//	every judge gave the same verdict   that verdict
//	majority                            scoring.Pass above half the weight, scoring.Fail below, scoring.Warn at exactly half
//	mean, median                        scoring.Pass when Score >= minScore, else scoring.Fail
//	min                                 scoring.Fail (some judge did not pass, and min follows the strictest)
//
// and its scoring.Verdict is the Decision, but scoring.Warn where there is
// Disagreement and the Decision is not scoring.Fail: disagreement softens a
// pass, never a fail (12 judges' FAIL and one fooled judge's PASS is a
// FAIL, with its Disagreement and Agreement, 12/13, kept). Agreement is the
// weighted share of the judges whose verdict is the Decision. A runner
// that does not report disagreement uses Decision as the verdict.
func AggregateWith(results []scoring.JudgeResult, method string, threshold, minScore float64) scoring.JuryResult {
	jr := scoring.JuryResult{Judges: results, Verdict: scoring.Error, Decision: scoring.Error}
	var valid []scoring.JudgeResult
	for _, r := range results {
		if r.Verdict == scoring.Error {
			continue
		}
		if r.Weight <= 0 {
			r.Weight = 1
		}
		valid = append(valid, r)
	}
	if len(valid) == 0 {
		return jr
	}
	method = strings.ToLower(strings.TrimSpace(method))
	jr.Score = aggregateScore(valid, method)
	jr.StdDev, jr.Spread = dispersion(valid)

	unanimous := true
	for _, r := range valid[1:] {
		if r.Verdict != valid[0].Verdict {
			unanimous = false
		}
	}
	jr.Disagreement = !unanimous || (threshold > 0 && jr.StdDev > threshold+eps)
	switch {
	case unanimous:
		jr.Decision = valid[0].Verdict
	case method == AggregateMajority:
		switch {
		case jr.Score > 0.5+eps:
			jr.Decision = scoring.Pass
		case jr.Score < 0.5-eps:
			jr.Decision = scoring.Fail
		default:
			jr.Decision = scoring.Warn
		}
	case method == AggregateMin:
		jr.Decision = scoring.Fail
	case jr.Score >= minScore-eps:
		jr.Decision = scoring.Pass
	default:
		jr.Decision = scoring.Fail
	}
	jr.Agreement = agreement(valid, jr.Decision)
	jr.Verdict = jr.Decision
	if jr.Disagreement && jr.Decision != scoring.Fail {
		jr.Verdict = scoring.Warn
	}
	return jr
}

// agreement is the weighted share of rs whose verdict is v.
func agreement(rs []scoring.JudgeResult, v scoring.Verdict) float64 {
	var agree, total float64
	for _, r := range rs {
		total += r.Weight
		if r.Verdict == v {
			agree += r.Weight
		}
	}
	return agree / total
}

func aggregateScore(rs []scoring.JudgeResult, method string) float64 {
	switch method {
	case AggregateMedian:
		return weightedMedian(rs)
	case AggregateMin:
		m := rs[0].Score
		for _, r := range rs[1:] {
			m = math.Min(m, r.Score)
		}
		return m
	case AggregateMajority:
		var pass, total float64
		for _, r := range rs {
			total += r.Weight
			if r.Verdict == scoring.Pass {
				pass += r.Weight
			}
		}
		return pass / total
	}
	return weightedMean(rs)
}

func weightedMean(rs []scoring.JudgeResult) float64 {
	var sum, total float64
	for _, r := range rs {
		sum += r.Weight * r.Score
		total += r.Weight
	}
	return sum / total
}

// weightedMedian is the score at which half the weight lies on each side;
// when a score's cumulative weight reaches exactly half, it is the mean of
// that score and the next, so equal weights give the usual median.
func weightedMedian(rs []scoring.JudgeResult) float64 {
	sorted := append([]scoring.JudgeResult(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Score < sorted[j].Score })
	var total float64
	for _, r := range sorted {
		total += r.Weight
	}
	half := total / 2
	var cum float64
	for i, r := range sorted {
		cum += r.Weight
		if math.Abs(cum-half) <= eps*total && i+1 < len(sorted) {
			return (r.Score + sorted[i+1].Score) / 2
		}
		if cum > half {
			return r.Score
		}
	}
	return sorted[len(sorted)-1].Score
}

// dispersion returns the weighted standard deviation of the scores around
// their weighted mean, and max − min.
func dispersion(rs []scoring.JudgeResult) (stddev, spread float64) {
	mean := weightedMean(rs)
	var ss, total float64
	lo, hi := rs[0].Score, rs[0].Score
	for _, r := range rs {
		d := r.Score - mean
		ss += r.Weight * d * d
		total += r.Weight
		lo, hi = math.Min(lo, r.Score), math.Max(hi, r.Score)
	}
	return math.Sqrt(ss / total), hi - lo
}
