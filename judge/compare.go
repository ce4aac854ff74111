package judge

import "pitwall/judge/scoring"

// Comparison is how two judges agreed over the cells both judged.
type Comparison struct {
	N         int     `json:"n"`         // cells both judged (neither scoring.Error nor unjudged)
	Agreement float64 `json:"agreement"` // share of those cells with the same verdict
	Kappa     float64 `json:"kappa"`     // Cohen's κ: agreement beyond what chance gives
}

// Compare compares two judges' verdicts on the same cells, index by index,
// and returns their raw agreement and Cohen's κ. See CompareVerdicts.
func Compare(a, b []scoring.Verdict) (agreement, kappa float64) {
	c := CompareVerdicts(a, b)
	return c.Agreement, c.Kappa
}

// CompareVerdicts compares two judges' verdicts on the same cells, index by
// index. A cell counts only when both judged it: an scoring.Error or empty verdict on
// either side, or an index past the shorter list, leaves it out. scoring.Pass, scoring.Fail
// and scoring.Warn are the categories.
//
// κ = (po − pe) / (1 − pe), po the observed agreement and pe the agreement
// expected by chance from each judge's own rates. Degenerate cases:
//
//	no cell both judged                         N = 0, agreement 0, κ 0
//	both judges gave one and the same verdict   pe = 1 and po = 1: κ = 1 (they agree fully;
//	                                            the formula's 0/0 says nothing, and perfect
//	                                            agreement should not read as chance)
//
// One constant judge against a varying one gives κ = 0 from the formula:
// agreement no better than chance.
func CompareVerdicts(a, b []scoring.Verdict) Comparison {
	var counts [2]map[scoring.Verdict]int
	counts[0], counts[1] = map[scoring.Verdict]int{}, map[scoring.Verdict]int{}
	n, agree := 0, 0
	for i := 0; i < len(a) && i < len(b); i++ {
		if !comparable(a[i]) || !comparable(b[i]) {
			continue
		}
		n++
		counts[0][a[i]]++
		counts[1][b[i]]++
		if a[i] == b[i] {
			agree++
		}
	}
	if n == 0 {
		return Comparison{}
	}
	po := float64(agree) / float64(n)
	pe := 0.0
	for v, ca := range counts[0] {
		pe += float64(ca) / float64(n) * float64(counts[1][v]) / float64(n)
	}
	c := Comparison{N: n, Agreement: po}
	if 1-pe < eps {
		c.Kappa = 1
		return c
	}
	c.Kappa = (po - pe) / (1 - pe)
	return c
}

func comparable(v scoring.Verdict) bool {
	return v == scoring.Pass || v == scoring.Fail || v == scoring.Warn
}
