package judge

import (
	"fmt"
	"math"
	"pitwall/judge/scoring"
	"testing"
)

func pass(score float64) scoring.Sample { return scoring.Sample{Pass: true, Score: score} }
func fail(score float64) scoring.Sample { return scoring.Sample{Pass: false, Score: score} }

var unparsed = scoring.Sample{Raw: "hmm", ParseErr: "no verdict"}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestVote(t *testing.T) {
	tests := []struct {
		name      string
		samples   []scoring.Sample
		minScore  float64
		verdict   scoring.Verdict
		score     float64
		agreement float64
	}{
		{"one pass", []scoring.Sample{pass(1)}, 0.8, scoring.Pass, 1, 1},
		{"one fail", []scoring.Sample{fail(0)}, 0.8, scoring.Fail, 0, 1},
		{"pass under min score", []scoring.Sample{pass(0.7)}, 0.8, scoring.Fail, 0.7, 1},
		{"pass at min score", []scoring.Sample{pass(0.8)}, 0.8, scoring.Pass, 0.8, 1},
		{"three agree", []scoring.Sample{pass(1), pass(0.9), pass(0.8)}, 0.8, scoring.Pass, 0.9, 1},
		{"two to one is decided", []scoring.Sample{pass(1), pass(1), fail(0)}, 0.5, scoring.Pass, 2.0 / 3, 2.0 / 3},
		{"two to one, mean under min score", []scoring.Sample{pass(1), pass(1), fail(0)}, 0.8, scoring.Fail, 2.0 / 3, 2.0 / 3},
		{"two to one against", []scoring.Sample{fail(0), fail(0), pass(1)}, 0, scoring.Fail, 1.0 / 3, 2.0 / 3},
		{"tie of two is a split", []scoring.Sample{pass(1), fail(0)}, 0, scoring.Warn, 0.5, 0.5},
		{"three to two is a split", []scoring.Sample{pass(1), pass(1), pass(1), fail(0), fail(0)}, 0, scoring.Warn, 0.6, 0.6},
		{"a split under min score is a fail", []scoring.Sample{pass(0.6), fail(0)}, 0.5, scoring.Fail, 0.3, 0.5},
		{"three to two against, under min score, is a fail", []scoring.Sample{fail(0), fail(0), fail(0.1), pass(0.9), pass(1)}, 0.5, scoring.Fail, 0.4, 0.6},
		{"a split at min score stays a split", []scoring.Sample{pass(1), fail(0)}, 0.5, scoring.Warn, 0.5, 0.5},
		{"three to one is decided", []scoring.Sample{pass(1), pass(1), pass(1), fail(0)}, 0.5, scoring.Pass, 0.75, 0.75},
		{"unparsed ignored", []scoring.Sample{pass(1), unparsed, pass(0.9)}, 0.8, scoring.Pass, 0.95, 1},
		{"unparsed do not make a split", []scoring.Sample{fail(0), unparsed, unparsed}, 0, scoring.Fail, 0, 1},
		{"none parsed", []scoring.Sample{unparsed, unparsed}, 0, scoring.Error, 0, 0},
		{"no samples", nil, 0, scoring.Error, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Vote("gemma", 2, tt.samples, tt.minScore)
			if r.Verdict != tt.verdict || !near(r.Score, tt.score) || !near(r.Agreement, tt.agreement) {
				t.Errorf("Vote = %s score %v agreement %v; want %s %v %v", r.Verdict, r.Score, r.Agreement, tt.verdict, tt.score, tt.agreement)
			}
			if r.Judge != "gemma" || r.Weight != 2 || len(r.Samples) != len(tt.samples) {
				t.Errorf("Vote lost the judge, weight or samples: %+v", r)
			}
		})
	}
}

func judgeRes(name string, w float64, v scoring.Verdict, score float64) scoring.JudgeResult {
	return scoring.JudgeResult{Judge: name, Weight: w, Verdict: v, Score: score}
}

func TestAggregate(t *testing.T) {
	tests := []struct {
		name         string
		judges       []scoring.JudgeResult
		method       string
		threshold    float64
		verdict      scoring.Verdict
		decision     scoring.Verdict
		score        float64
		stddev       float64
		spread       float64
		disagreement bool
	}{
		{"unanimous pass", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 1, scoring.Pass, 0.8)}, "mean", 0.3,
			scoring.Pass, scoring.Pass, 0.9, 0.1, 0.2, false},
		{"unanimous fail", []scoring.JudgeResult{judgeRes("a", 1, scoring.Fail, 0), judgeRes("b", 1, scoring.Fail, 0.2)}, "mean", 0.3,
			scoring.Fail, scoring.Fail, 0.1, 0.1, 0.2, false},
		{"weighted mean", []scoring.JudgeResult{judgeRes("a", 3, scoring.Pass, 1), judgeRes("b", 1, scoring.Pass, 0.6)}, "mean", 0.3,
			scoring.Pass, scoring.Pass, 0.9, math.Sqrt(0.03), 0.4, false},
		{"verdicts differ is a disagreement", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 1, scoring.Pass, 1), judgeRes("c", 1, scoring.Fail, 0)}, "majority", 0,
			scoring.Warn, scoring.Pass, 2.0 / 3, math.Sqrt(2.0 / 9), 1, true},
		{"scores far apart is a disagreement", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 1, scoring.Pass, 0.3)}, "mean", 0.3,
			scoring.Warn, scoring.Pass, 0.65, 0.35, 0.7, true},
		{"threshold zero checks verdicts only", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 1, scoring.Pass, 0.3)}, "mean", 0,
			scoring.Pass, scoring.Pass, 0.65, 0.35, 0.7, false},
		{"median", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 0.9), judgeRes("b", 1, scoring.Pass, 0.8), judgeRes("c", 1, scoring.Pass, 0.1)}, "median", 0,
			scoring.Pass, scoring.Pass, 0.8, math.Sqrt((0.09 + 0.04 + 0.25) / 3), 0.8, false},
		{"median of two is their mean", []scoring.JudgeResult{judgeRes("a", 1, scoring.Fail, 0.2), judgeRes("b", 1, scoring.Pass, 0.8)}, "median", 0,
			scoring.Warn, scoring.Pass, 0.5, 0.3, 0.6, true},
		{"weighted median", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 0.9), judgeRes("b", 1, scoring.Pass, 0.8), judgeRes("c", 3, scoring.Fail, 0.1)}, "median", 0,
			scoring.Fail, scoring.Fail, 0.1, math.Sqrt(0.136), 0.8, true},
		{"min", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 0.9), judgeRes("b", 1, scoring.Fail, 0.4)}, "min", 0,
			scoring.Fail, scoring.Fail, 0.4, 0.25, 0.5, true},
		{"weighted majority", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 3, scoring.Fail, 0)}, "majority", 0,
			scoring.Fail, scoring.Fail, 0.25, math.Sqrt(3.0 / 16), 1, true},
		{"majority tie", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 1, scoring.Fail, 0)}, "majority", 0,
			scoring.Warn, scoring.Warn, 0.5, 0.5, 1, true},
		{"warn judges stay warn", []scoring.JudgeResult{judgeRes("a", 1, scoring.Warn, 0.5), judgeRes("b", 1, scoring.Warn, 0.5)}, "mean", 0.3,
			scoring.Warn, scoring.Warn, 0.5, 0, 0, false},
		{"errors excluded", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 1, scoring.Error, 0)}, "mean", 0.3,
			scoring.Pass, scoring.Pass, 1, 0, 0, false},
		{"all errors", []scoring.JudgeResult{judgeRes("a", 1, scoring.Error, 0), judgeRes("b", 1, scoring.Error, 0)}, "mean", 0.3,
			scoring.Error, scoring.Error, 0, 0, 0, false},
		{"no judges", nil, "mean", 0.3, scoring.Error, scoring.Error, 0, 0, 0, false},
		{"zero weight counts as one", []scoring.JudgeResult{judgeRes("a", 0, scoring.Pass, 1), judgeRes("b", 1, scoring.Pass, 0.5)}, "mean", 0,
			scoring.Pass, scoring.Pass, 0.75, 0.25, 0.5, false},
		{"unknown method is mean", []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 1), judgeRes("b", 1, scoring.Pass, 0.5)}, "avg", 0,
			scoring.Pass, scoring.Pass, 0.75, 0.25, 0.5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := Aggregate(tt.judges, tt.method, tt.threshold)
			if j.Verdict != tt.verdict || j.Decision != tt.decision || j.Disagreement != tt.disagreement {
				t.Errorf("verdict %s decision %s disagreement %v; want %s %s %v", j.Verdict, j.Decision, j.Disagreement, tt.verdict, tt.decision, tt.disagreement)
			}
			if !near(j.Score, tt.score) || !near(j.StdDev, tt.stddev) || !near(j.Spread, tt.spread) {
				t.Errorf("score %v stddev %v spread %v; want %v %v %v", j.Score, j.StdDev, j.Spread, tt.score, tt.stddev, tt.spread)
			}
			if len(j.Judges) != len(tt.judges) {
				t.Errorf("kept %d judges, want all %d", len(j.Judges), len(tt.judges))
			}
		})
	}
}

// TestADisagreeingJuryNeverSoftensAFail (issue 33): disagreement softens
// a pass, never a fail. 12 of 13 judges fail the cell and one is fooled:
// the jury fails it, its disagreement and agreement kept; a split that
// passes stays WARN.
func TestADisagreeingJuryNeverSoftensAFail(t *testing.T) {
	var jury []scoring.JudgeResult
	for i := range 12 {
		jury = append(jury, judgeRes(fmt.Sprintf("j%d", i), 1, scoring.Fail, 0.05))
	}
	jury = append(jury, judgeRes("fooled", 1, scoring.Pass, 0.6))
	for _, method := range []string{AggregateMean, AggregateMedian, AggregateMajority, AggregateMin} {
		j := AggregateWith(jury, method, 0.2, 0.5)
		if j.Verdict != scoring.Fail || j.Decision != scoring.Fail || !j.Disagreement || !near(j.Agreement, 12.0/13) {
			t.Errorf("%s: verdict %s decision %s disagreement %v agreement %.3f (score %.2f); want FAIL, the disagreement shown, agreement 12/13",
				method, j.Verdict, j.Decision, j.Disagreement, j.Agreement, j.Score)
		}
	}
	split := []scoring.JudgeResult{judgeRes("a", 1, scoring.Pass, 0.9), judgeRes("b", 1, scoring.Pass, 0.8), judgeRes("c", 1, scoring.Fail, 0.3)}
	if j := AggregateWith(split, AggregateMean, 0, 0.5); j.Verdict != scoring.Warn || j.Decision != scoring.Pass || !near(j.Agreement, 2.0/3) {
		t.Errorf("a split pass: verdict %s decision %s agreement %.3f; want WARN, PASS, 2/3", j.Verdict, j.Decision, j.Agreement)
	}
	// The bar is min_score: a mean of 0.6 under min_score 0.7 fails.
	if j := AggregateWith(split[1:], AggregateMean, 0, 0.7); j.Verdict != scoring.Fail {
		t.Errorf("a mean of 0.55 under min_score 0.7: verdict %s, want FAIL", j.Verdict)
	}
	// A unanimous pass whose scores spread past the threshold is softened.
	if j := AggregateWith(split[:2], AggregateMean, 0.01, 0.5); j.Verdict != scoring.Warn {
		t.Errorf("scores far apart on a pass: verdict %s, want WARN", j.Verdict)
	}
}
