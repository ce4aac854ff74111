package qualify

import (
	"math"
	"reflect"
	"testing"
	"time"

	"pitwall/judge"
	"pitwall/judge/scoring"
)

// answers builds one judge's calls: per case, its samples in order. A nil
// sample is a failed request.
func answers(judge string, byCase map[string][]*scoring.Sample) []Call {
	var out []Call
	for _, id := range []string{"c1", "c2", "c3", "c4"} {
		for k, s := range byCase[id] {
			c := Call{Judge: judge, Case: id, Sample: k, PromptTokens: 100, CompletionTokens: 20, Latency: time.Second}
			if s == nil {
				c = Call{Judge: judge, Case: id, Sample: k, Err: "HTTP 500", Latency: 2 * time.Second}
			} else {
				c.Parsed = *s
			}
			out = append(out, c)
		}
	}
	return out
}

func ptr(s scoring.Sample) *scoring.Sample { return &s }

var qualifyCases = []Case{{"c1", scoring.Pass}, {"c2", scoring.Pass}, {"c3", scoring.Fail}, {"c4", scoring.Fail}}

// qualifyCalls: judge A is right 5 times in 8 (a split on c2, a miss and a
// failed request on c4); judge B is always right.
func qualifyCalls() []Call {
	a := answers("A", map[string][]*scoring.Sample{
		"c1": {ptr(pass(0.9)), ptr(pass(0.8))},
		"c2": {ptr(pass(0.9)), ptr(fail(0.1))},
		"c3": {ptr(fail(0.1)), ptr(fail(0.1))},
		"c4": {ptr(pass(0.9)), nil},
	})
	b := answers("B", map[string][]*scoring.Sample{
		"c1": {ptr(pass(0.9)), ptr(pass(0.9))},
		"c2": {ptr(pass(0.9)), ptr(pass(0.9))},
		"c3": {ptr(fail(0.1)), ptr(fail(0.1))},
		"c4": {ptr(fail(0.1)), ptr(fail(0.1))},
	})
	return append(a, b...)
}

func nearly(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// The figures below are worked out by hand in the comments.
func TestQualifyFiguresAJudge(t *testing.T) {
	r := Figures(qualifyCases, qualifyCalls(), Options{MinScore: 0.5})
	if r.Cases != 4 || len(r.Judges) != 2 || r.Judges[0].Judge != "A" || r.Judges[1].Judge != "B" {
		t.Fatalf("report %+v, want judges A and B over 4 cases", r)
	}
	a := r.Judges[0]
	// Verdicts per answer: c1 P P, c2 P F, c3 F F, c4 P J-ERR.
	if a.Verdicts != 8 || a.Correct != 5 || a.Errors != 1 {
		t.Errorf("verdicts %d correct %d errors %d, want 8 5 1", a.Verdicts, a.Correct, a.Errors)
	}
	if a.TP != 2 || a.FP != 1 || a.FN != 2 || a.TN != 3 {
		t.Errorf("TP %d FP %d FN %d TN %d, want 2 1 2 3", a.TP, a.FP, a.FN, a.TN)
	}
	nearly(t, "accuracy", a.Accuracy, 5.0/8)
	nearly(t, "error rate", a.ErrorRate, 1.0/8)
	nearly(t, "precision on FAIL", a.PrecisionFail, 2.0/3)
	nearly(t, "recall on FAIL", a.RecallFail, 2.0/4)
	// κ over the 7 answers with a verdict: expected PPPP FFF, given PPPF FFP;
	// po = 5/7, pe = (4/7)² + (3/7)² = 25/49, κ = (35−25)/(49−25) = 10/24.
	if a.Kappa.N != 7 {
		t.Errorf("κ over %d answers, want 7", a.Kappa.N)
	}
	nearly(t, "agreement with the expectation", a.Kappa.Agreement, 5.0/7)
	nearly(t, "κ", a.Kappa.Kappa, 10.0/24)
	// Voted: c1 PASS ✓, c2 WARN (1–1) ✗, c3 FAIL ✓, c4 PASS (one parsed sample) ✗.
	nearly(t, "voted accuracy", a.VotedAccuracy, 2.0/4)
	// Consistency over c1 (1), c2 (1/2), c3 (1); c4 has one parsed sample.
	if a.ConsistencyCases != 3 {
		t.Errorf("consistency over %d cases, want 3", a.ConsistencyCases)
	}
	nearly(t, "consistency", a.Consistency, 2.5/3)
	// Tokens: 7 answered × 120 over 8 verdicts; time 7 s + 2 s over 8.
	if a.PromptTokens != 700 || a.CompletionTokens != 140 {
		t.Errorf("tokens %d + %d, want 700 + 140", a.PromptTokens, a.CompletionTokens)
	}
	nearly(t, "tokens per verdict", a.TokensPerVerdict, 105)
	if a.TimePerVerdict != 1125*time.Millisecond {
		t.Errorf("time per verdict %v, want 1.125s", a.TimePerVerdict)
	}

	b := r.Judges[1]
	nearly(t, "B's accuracy", b.Accuracy, 1)
	nearly(t, "B's κ", b.Kappa.Kappa, 1)
	nearly(t, "B's precision", b.PrecisionFail, 1)
	nearly(t, "B's recall", b.RecallFail, 1)
	nearly(t, "B's consistency", b.Consistency, 1)

	// A against B answer by answer, without A's failed request: the same
	// 5 in 7 and the same marginals as A against the expectation.
	if len(r.Pairs) != 1 || r.Pairs[0].A != "A" || r.Pairs[0].B != "B" || r.Pairs[0].Comparison.N != 7 {
		t.Fatalf("pairs %+v, want A–B over 7 answers", r.Pairs)
	}
	nearly(t, "A–B κ", r.Pairs[0].Comparison.Kappa, 10.0/24)

	if got := r.Below(0.9); !reflect.DeepEqual(got, []string{"A"}) {
		t.Errorf("Below(0.9) = %v, want [A]", got)
	}
	if got := r.Below(0.625); got != nil {
		t.Errorf("Below(0.625) = %v: a judge at exactly the minimum is not below it", got)
	}
}

func TestQualifyRowsAreTheGrid(t *testing.T) {
	r := Figures(qualifyCases, qualifyCalls(), Options{MinScore: 0.5})
	want := map[string][]scoring.Verdict{
		"c1": {scoring.Pass, scoring.Pass}, "c2": {scoring.Warn, scoring.Pass},
		"c3": {scoring.Fail, scoring.Fail}, "c4": {scoring.Pass, scoring.Fail},
	}
	for i, row := range r.Rows {
		if row.Case != qualifyCases[i].ID || row.Expect != qualifyCases[i].Expect || len(row.Cells) != 2 {
			t.Fatalf("row %d = %+v", i, row)
		}
		for k, c := range row.Cells {
			if c.Verdict != want[row.Case][k] || c.Correct != (c.Verdict == row.Expect) {
				t.Errorf("%s/%s: %s correct %v, want %s", row.Case, c.Judge, c.Verdict, c.Correct, want[row.Case][k])
			}
		}
	}
}

func TestQualifyTheJury(t *testing.T) {
	jo := &JuryOptions{Aggregation: judge.AggregateMean, DisagreementMax: 0.3, ReportDisagreement: true}
	r := Figures(qualifyCases, qualifyCalls(), Options{MinScore: 0.5, Jury: jo})
	if len(r.Judges) != 3 || r.Judges[2].Judge != scoring.JuryName || len(r.Pairs) != 1 {
		t.Fatalf("judges %d pairs %d, want A, B and the jury, one pair", len(r.Judges), len(r.Pairs))
	}
	j := r.Judges[2]
	// c1 both PASS: PASS ✓; c2 A WARN, B PASS: disagreement, WARN ✗;
	// c3 both FAIL ✓; c4 A PASS, B FAIL: WARN ✗.
	if j.Verdicts != 4 || j.Correct != 2 || j.TP != 1 || j.FN != 1 || j.TN != 1 || j.FP != 0 {
		t.Errorf("jury %+v, want 4 verdicts, 2 right, TP 1 FN 1 TN 1 FP 0", j)
	}
	nearly(t, "jury accuracy", j.Accuracy, 0.5)
	// Expected P P F F, given P W F W: po = 1/2, pe = ½·¼ + ½·¼ = ¼, κ = ⅓.
	nearly(t, "jury κ", j.Kappa.Kappa, 1.0/3)
	// The jury costs what its judges cost on the same cases: 15 answers.
	if j.PromptTokens != 1500 || j.TimePerVerdict != 17*time.Second/4 {
		t.Errorf("jury tokens %d time/verdict %v, want 1500 and 4.25s", j.PromptTokens, j.TimePerVerdict)
	}
	if c := r.Rows[1].Cells[2]; c.Judge != scoring.JuryName || c.Verdict != scoring.Warn || c.Correct {
		t.Errorf("c2's jury cell %+v, want a WARN that is not correct", c)
	}

	// Without reporting disagreement the mean decides: c4 averages A's 0.9
	// and B's 0.1 to 0.5, which passes; c2 0.5 and 0.9 passes too.
	jo.ReportDisagreement = false
	r = Figures(qualifyCases, qualifyCalls(), Options{MinScore: 0.5, Jury: jo})
	nearly(t, "jury accuracy deciding by the mean", r.Judges[2].Accuracy, 3.0/4)
}

func TestQualifyHoldsPassesToMinScore(t *testing.T) {
	calls := []Call{
		{Judge: "J", Case: "c1", Parsed: pass(0.4)}, // a PASS below min_score is a FAIL, as in a run
		{Judge: "J", Case: "c3", Parsed: scoring.Sample{ParseErr: "no VERDICT"}},
		{Judge: "J", Case: "elsewhere", Parsed: pass(1)}, // not a case of the battery: not counted
	}
	r := Figures(qualifyCases, calls, Options{MinScore: 0.5})
	j := r.Judges[0]
	if j.Verdicts != 2 || j.Correct != 0 || j.FP != 1 || j.FN != 1 || j.Errors != 1 {
		t.Errorf("got %+v, want 2 verdicts: a FP and a J-ERR that is a miss", j)
	}
	if j.PrecisionFail != 0 || j.RecallFail != 0 || j.ConsistencyCases != 0 {
		t.Errorf("precision %v recall %v consistency cases %d, want 0 0 0", j.PrecisionFail, j.RecallFail, j.ConsistencyCases)
	}
	if j.Kappa.N != 1 {
		t.Errorf("κ over %d answers, want the one with a verdict", j.Kappa.N)
	}
}

func TestQualifyWithNoCalls(t *testing.T) {
	r := Figures(qualifyCases, nil, Options{})
	if len(r.Judges) != 0 || len(r.Pairs) != 0 || len(r.Rows) != 4 || r.Below(1) != nil {
		t.Errorf("got %+v, want four rows and no judges", r)
	}
}

func pass(score float64) scoring.Sample { return scoring.Sample{Pass: true, Score: score} }

func fail(score float64) scoring.Sample { return scoring.Sample{Pass: false, Score: score} }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
