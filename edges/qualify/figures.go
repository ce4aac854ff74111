package qualify

import (
	"time"

	"pitwall/judge"
	"pitwall/judge/scoring"
)

// eps absorbs float rounding in comparisons of shares and scores, as judge's
// own does.
const eps = 1e-9

// Qualifying a judge: a judge battery is a set of cases, each a fixed
// candidate output with the verdict a good judge gives it. Every judge
// answers every case k times (samples); Figures compares what they said
// with what was expected, and with each other. It is pure: the caller sends
// the requests (judge.Render, then judge.ParseReply on each answer) and hands over what
// came back.
//
// The unit is one answer (a sample): accuracy, precision, recall, κ,
// the J-ERR rate and the cost are per answer, so that a judge's figures
// read as "one call of this judge". VotedAccuracy is per case, after judge.Vote
// over the samples, as a run with the same samples would report it.
//
//   - A sample's verdict is PASS when it passed with a score of at least
//     MinScore (as in a run), FAIL otherwise, and J-ERR when the request
//     failed or the answer held no verdict.
//   - Accuracy is the share of answers whose verdict is the expected one; a
//     J-ERR is never right. The J-ERR rate is reported apart as well.
//   - Precision and recall treat FAIL as the positive class (catching a bad
//     answer is what a judge is for): precision = TP / (TP + FP), recall =
//     TP / (TP + FN), where a J-ERR on a case expected to FAIL is a miss
//     (FN). Either is 0 when its denominator is.
//   - κ (Cohen's, see judge.CompareVerdicts) is over the answers that gave a
//     verdict; J-ERRs are left out, as in judge comparisons of a run.
//   - Consistency is the mean, over cases with at least two parsed samples,
//     of the share of samples agreeing with the case's majority (Vote's
//     Agreement); ConsistencyCases says how many cases that is (0 with one
//     sample per case).
//   - Tokens and time are per answered request (a request that failed
//     costs what the server reports, and counts as a verdict all the same).

// Case is one test of a judge battery and the verdict expected of a
// judge: scoring.Pass or scoring.Fail.
type Case struct {
	ID     string
	Expect scoring.Verdict
}

// Call is one judge's answer to one case, one sample: ParseReply's
// sample, or the error of the request, and what it cost.
type Call struct {
	Judge            string
	Case             string // Case.ID; calls for other ids are not counted
	Sample           int
	Parsed           scoring.Sample
	Err              string // the request failed (a J-ERR); Parsed is not read
	PromptTokens     int
	CompletionTokens int
	Latency          time.Duration
}

// Options are the scoring settings the judges are held to: those
// of the config being qualified.
type Options struct {
	MinScore float64 // [scoring] min_score
	// Jury, when set and there are two judges or more, qualifies the jury
	// of all of them too, as one more judge named scoring.JuryName.
	Jury *JuryOptions
}

// JuryOptions is how the config's jury aggregates its judges.
type JuryOptions struct {
	Aggregation        string             // [scoring] aggregation
	DisagreementMax    float64            // [scoring] disagreement_threshold
	ReportDisagreement bool               // a disagreement is WARN (else the aggregate decides)
	Weights            map[string]float64 // by judge; missing or 0 counts 1
}

// Report is every judge's figures on a judge battery.
type Report struct {
	Cases  int            `json:"cases"`
	Judges []JudgeQuality `json:"judges"` // in the order judges first appear in the calls; the jury last
	Pairs  []JudgePair    `json:"pairs"`  // every pair of judges (not the jury), in that order
	Rows   []Row          `json:"rows"`   // one per case, in the battery's order
}

// JudgeQuality is one judge's figures; see the top of figures.go for how
// each is counted.
type JudgeQuality struct {
	Judge         string  `json:"judge"`
	Verdicts      int     `json:"verdicts"` // answers counted
	Correct       int     `json:"correct"`
	Accuracy      float64 `json:"accuracy"`
	VotedAccuracy float64 `json:"voted_accuracy"`
	// The confusion matrix, FAIL the positive class: TP a FAIL expected and
	// given, FP a FAIL given to a case expected to PASS, FN a case expected
	// to FAIL given anything else, TN a PASS expected and given.
	TP               int              `json:"tp"`
	FP               int              `json:"fp"`
	TN               int              `json:"tn"`
	FN               int              `json:"fn"`
	PrecisionFail    float64          `json:"precision_fail"`
	RecallFail       float64          `json:"recall_fail"`
	Kappa            judge.Comparison `json:"kappa"` // against the expected verdicts
	Consistency      float64          `json:"consistency"`
	ConsistencyCases int              `json:"consistency_cases"`
	Errors           int              `json:"errors"`
	ErrorRate        float64          `json:"error_rate"`
	PromptTokens     int              `json:"prompt_tokens"`
	CompletionTokens int              `json:"completion_tokens"`
	TokensPerVerdict float64          `json:"tokens_per_verdict"`
	TimePerVerdict   time.Duration    `json:"time_per_verdict"`
}

// JudgePair is how two judges agreed, answer by answer (same case, same
// sample index).
type JudgePair struct {
	A          string           `json:"a"`
	B          string           `json:"b"`
	Comparison judge.Comparison `json:"comparison"`
}

// Row is one case of the battery as the grid shows it.
type Row struct {
	Case   string          `json:"case"`
	Expect scoring.Verdict `json:"expect"`
	Cells  []Cell          `json:"cells"` // one per judge, in Judges' order
}

// Cell is one judge's voted verdict on one case, and whether it is
// the one expected (✓/✗ in the grid).
type Cell struct {
	Judge     string          `json:"judge"`
	Verdict   scoring.Verdict `json:"verdict"`
	Score     float64         `json:"score"`
	Agreement float64         `json:"agreement"`
	Correct   bool            `json:"correct"`
}

// Below names the judges whose Accuracy is under min, for --min-accuracy.
func (r Report) Below(min float64) []string {
	var out []string
	for _, j := range r.Judges {
		if j.Accuracy < min-eps {
			out = append(out, j.Judge)
		}
	}
	return out
}

// Figures computes every judge's figures from their answers to the cases.
func Figures(cases []Case, calls []Call, opts Options) Report {
	index := make(map[string]int, len(cases))
	for i, c := range cases {
		index[c.ID] = i
	}
	var judges []string
	byJudge := map[string][]Call{}
	for _, c := range calls {
		if _, ok := index[c.Case]; !ok {
			continue
		}
		if _, seen := byJudge[c.Judge]; !seen {
			judges = append(judges, c.Judge)
		}
		byJudge[c.Judge] = append(byJudge[c.Judge], c)
	}

	r := Report{Cases: len(cases), Rows: make([]Row, len(cases))}
	for i, c := range cases {
		r.Rows[i] = Row{Case: c.ID, Expect: c.Expect}
	}
	voted := make(map[string][]scoring.JudgeResult, len(judges)) // by judge, by case
	for _, name := range judges {
		q, results := judgeQuality(name, cases, index, byJudge[name], opts.MinScore)
		r.Judges = append(r.Judges, q)
		voted[name] = results
		for i, res := range results {
			r.Rows[i].Cells = append(r.Rows[i].Cells, cell(name, res, cases[i].Expect))
		}
	}
	for a := 0; a < len(judges); a++ {
		for b := a + 1; b < len(judges); b++ {
			r.Pairs = append(r.Pairs, JudgePair{A: judges[a], B: judges[b],
				Comparison: pairAgreement(byJudge[judges[a]], byJudge[judges[b]], opts.MinScore)})
		}
	}
	if opts.Jury != nil && len(judges) >= 2 {
		q, results := juryQuality(judges, cases, byJudge, voted, *opts.Jury, opts.MinScore)
		r.Judges = append(r.Judges, q)
		for i, res := range results {
			r.Rows[i].Cells = append(r.Rows[i].Cells, cell(scoring.JuryName, res, cases[i].Expect))
		}
	}
	return r
}

// callVerdict is one answer's verdict, held to minScore as a run holds it.
func callVerdict(c Call, minScore float64) scoring.Verdict {
	switch {
	case c.Err != "" || c.Parsed.ParseErr != "":
		return scoring.Error
	case c.Parsed.Pass && c.Parsed.Score >= minScore-eps:
		return scoring.Pass
	}
	return scoring.Fail
}

// callSample is the sample a call adds to its case's vote.
func callSample(c Call) scoring.Sample {
	if c.Err != "" {
		return scoring.Sample{ParseErr: "judge request failed: " + c.Err}
	}
	return c.Parsed
}

// tally counts verdicts against expectations into q.
func (q *JudgeQuality) tally(got, want scoring.Verdict) {
	q.Verdicts++
	if got == want {
		q.Correct++
	}
	if got == scoring.Error {
		q.Errors++
	}
	switch {
	case want == scoring.Fail && got == scoring.Fail:
		q.TP++
	case want == scoring.Fail:
		q.FN++
	case got == scoring.Fail:
		q.FP++
	case got == want:
		q.TN++
	}
}

// finish turns q's counts into shares.
func (q *JudgeQuality) finish(expected, given []scoring.Verdict, latency time.Duration) {
	q.Accuracy = share(q.Correct, q.Verdicts)
	q.ErrorRate = share(q.Errors, q.Verdicts)
	q.PrecisionFail = share(q.TP, q.TP+q.FP)
	q.RecallFail = share(q.TP, q.TP+q.FN)
	q.Kappa = judge.CompareVerdicts(expected, given)
	q.TokensPerVerdict = float64(q.PromptTokens+q.CompletionTokens) / float64(max(q.Verdicts, 1))
	if q.Verdicts > 0 {
		q.TimePerVerdict = latency / time.Duration(q.Verdicts)
	}
}

func judgeQuality(name string, cases []Case, index map[string]int, calls []Call, minScore float64) (JudgeQuality, []scoring.JudgeResult) {
	q := JudgeQuality{Judge: name}
	samples := make([][]scoring.Sample, len(cases))
	var expected, given []scoring.Verdict
	var latency time.Duration
	for _, c := range calls {
		i := index[c.Case]
		got, want := callVerdict(c, minScore), cases[i].Expect
		q.tally(got, want)
		expected, given = append(expected, want), append(given, got)
		q.PromptTokens += c.PromptTokens
		q.CompletionTokens += c.CompletionTokens
		latency += c.Latency
		samples[i] = append(samples[i], callSample(c))
	}
	q.finish(expected, given, latency)

	results := make([]scoring.JudgeResult, len(cases))
	right, agreement := 0, 0.0
	for i := range cases {
		results[i] = judge.Vote(name, 1, samples[i], minScore)
		if results[i].Verdict == cases[i].Expect {
			right++
		}
		if parsed(samples[i]) >= 2 {
			q.ConsistencyCases++
			agreement += results[i].Agreement
		}
	}
	q.VotedAccuracy = share(right, len(cases))
	if q.ConsistencyCases > 0 {
		q.Consistency = agreement / float64(q.ConsistencyCases)
	}
	return q, results
}

// juryQuality qualifies the jury: per case, the judges' voted results
// aggregated as the config's jury does. Its cost per verdict is the sum of
// its judges' on the case.
func juryQuality(judges []string, cases []Case, byJudge map[string][]Call,
	voted map[string][]scoring.JudgeResult, jo JuryOptions, minScore float64) (JudgeQuality, []scoring.JudgeResult) {
	q := JudgeQuality{Judge: scoring.JuryName}
	var expected, given []scoring.Verdict
	var latency time.Duration
	results := make([]scoring.JudgeResult, len(cases))
	right := 0
	for i, c := range cases {
		var rs []scoring.JudgeResult
		for _, name := range judges {
			res := voted[name][i]
			res.Weight = jo.Weights[name]
			rs = append(rs, res)
		}
		jury := judge.AggregateWith(rs, jo.Aggregation, jo.DisagreementMax, minScore)
		v := jury.Verdict
		if !jo.ReportDisagreement && jury.Decision != "" {
			v = jury.Decision
		}
		results[i] = scoring.JudgeResult{Judge: scoring.JuryName, Score: jury.Score, Verdict: v}
		q.tally(v, c.Expect)
		expected, given = append(expected, c.Expect), append(given, v)
		if v == c.Expect {
			right++
		}
	}
	for _, name := range judges {
		for _, c := range byJudge[name] {
			q.PromptTokens += c.PromptTokens
			q.CompletionTokens += c.CompletionTokens
			latency += c.Latency
		}
	}
	q.finish(expected, given, latency)
	q.VotedAccuracy = share(right, len(cases))
	return q, results
}

// pairAgreement compares two judges answer by answer: the same case and
// sample index.
func pairAgreement(a, b []Call, minScore float64) judge.Comparison {
	type key struct {
		c string
		s int
	}
	bv := make(map[key]scoring.Verdict, len(b))
	for _, c := range b {
		bv[key{c.Case, c.Sample}] = callVerdict(c, minScore)
	}
	var va, vb []scoring.Verdict
	for _, c := range a {
		if v, ok := bv[key{c.Case, c.Sample}]; ok {
			va, vb = append(va, callVerdict(c, minScore)), append(vb, v)
		}
	}
	return judge.CompareVerdicts(va, vb)
}

func cell(judge string, r scoring.JudgeResult, expect scoring.Verdict) Cell {
	return Cell{Judge: judge, Verdict: r.Verdict, Score: r.Score, Agreement: r.Agreement, Correct: r.Verdict == expect}
}

func parsed(samples []scoring.Sample) int {
	n := 0
	for _, s := range samples {
		if s.ParseErr == "" {
			n++
		}
	}
	return n
}

func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}
