package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"pitwall/judge"
	"pitwall/judge/scoring"
)

// What a ranking is by.
const (
	ByRate  = "rate"  // pass rate, Wilson interval
	ByScore = "score" // mean score, bootstrap interval over tests
)

// Options tune a comparison. The zero value is the default.
type Options struct {
	By        string  // ByRate (default) or ByScore
	Level     float64 // confidence level of every interval and test (default 0.95)
	Seed      uint64  // bootstrap seed (default 1)
	Resamples int     // bootstrap resamples (default 2000)
}

func (o Options) withDefaults() (Options, error) {
	switch o.By {
	case "":
		o.By = ByRate
	case ByRate, ByScore:
	default:
		return o, fmt.Errorf("rank by %q: use %s or %s", o.By, ByRate, ByScore)
	}
	if o.Level == 0 {
		o.Level = defaultLevel
	}
	if !(o.Level > 0 && o.Level < 1) { // NaN too
		return o, fmt.Errorf("confidence level %g: it must lie between 0 and 1 (0.95, say)", o.Level)
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Resamples <= 0 {
		o.Resamples = 2000
	}
	return o, nil
}

// Report is the comparison of one or more runs.
type Report struct {
	By    string      `json:"ranked_by"` // rate | score
	Level float64     `json:"level"`
	Runs  []RunReport `json:"runs"`
	// Diffs compare each later run with the first.
	Diffs []Diff `json:"diffs,omitempty"`
	// Warnings say what makes the runs hard to compare (different judges).
	Warnings []string `json:"warnings,omitempty"`
}

// RunReport is one run's ranking and what goes with it.
type RunReport struct {
	ID         string        `json:"id"`
	Name       string        `json:"name"`
	Judge      string        `json:"judge"`
	Ranking    []ModelStats  `json:"ranking"` // best first
	Categories []string      `json:"categories"`
	Pairs      []Paired      `json:"pairs"` // every two models, in ranking order
	Judges     []JudgeAgreed `json:"judge_agreement,omitempty"`
}

// ModelStats is one model's figures in one run.
type ModelStats struct {
	Model string `json:"model"`
	// Rank is 1 + the number of models whose interval lies wholly above
	// this one's, so models that cannot be told apart share a rank.
	Rank int      `json:"rank"`
	Tied []string `json:"tied_with,omitempty"` // models whose interval overlaps this one's

	Counts
	Rate  Interval `json:"pass_rate"` // Wilson
	Score Interval `json:"score"`     // bootstrap over tests

	Categories []CategoryStats `json:"categories"`
	// Lowest and Highest bound the pass rate once the pending cells are
	// decided; equal to Rate.Value when none is pending.
	Lowest  float64 `json:"pass_rate_lowest"`
	Highest float64 `json:"pass_rate_highest"`

	LatencyMS        Spread `json:"latency_ms"`
	TTFTMS           Spread `json:"ttft_ms"`
	TokensPerSec     Spread `json:"tokens_per_sec"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
}

// Counts are a model's cells by outcome; Decided = Pass+Fail+Warn+Error,
// Pending = Unfinished+Unjudged. Known says whether they give a pass rate.
type Counts struct {
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Warn       int `json:"warn"`
	Error      int `json:"error"`
	JudgeError int `json:"judge_error"`
	None       int `json:"none"`
	Decided    int `json:"decided"`
	// Pending cells may still pass or fail: in inference, or completed
	// and waiting for the judge in view (Unjudged of them).
	Pending  int `json:"pending"`
	Unjudged int `json:"unjudged"`
	// Verdicts are the decided cells the judge in view decided itself.
	Verdicts int `json:"verdicts"`
}

// Add counts a cell's outcome; byJudge says the judge in view gave it.
func (c *Counts) Add(o Outcome, byJudge bool) {
	switch o {
	case Pass:
		c.Pass++
	case Fail:
		c.Fail++
	case Warn:
		c.Warn++
	case Error:
		c.Error++
	case JudgeError:
		c.JudgeError++
	case Unfinished:
		c.Pending++
	case Unjudged:
		c.Pending++
		c.Unjudged++
	default:
		c.None++
	}
	if o.Decided() {
		c.Decided++
		if byJudge {
			c.Verdicts++
		}
	}
}

// CategoryStats is a model's pass rate on one category of tests.
type CategoryStats struct {
	Category string `json:"category"`
	Counts
	Rate Interval `json:"pass_rate"`
}

// Paired is a paired comparison of A and B on the items both decided.
type Paired struct {
	A       string      `json:"a"`
	B       string      `json:"b"`
	Shared  int         `json:"shared"` // items both decided
	Both    int         `json:"both_pass"`
	Neither int         `json:"neither_pass"`
	Test    McNemarTest `json:"mcnemar"`
	// Model is set when A and B are two runs of this model.
	Model string `json:"model,omitempty"`
	// Says is the result in words.
	Says string `json:"says"`
	// Better is A or B when the test rejects "equally good" at the
	// report's level, and "" when the difference may be noise.
	Better string `json:"better,omitempty"`
}

// JudgeAgreed is how two judges agreed over the cells both judged.
type JudgeAgreed struct {
	A string `json:"a"`
	B string `json:"b"`
	judge.Comparison
}

// Runs compares runs: each one ranked, and each later run diffed against
// the first.
func Runs(opts Options, runs ...Run) (*Report, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("compare: no runs given")
	}
	rep := &Report{By: o.By, Level: o.Level}
	for i := range runs {
		rep.Runs = append(rep.Runs, rankRun(&runs[i], o))
	}
	for i := 1; i < len(runs); i++ {
		rep.Diffs = append(rep.Diffs, diffRuns(&runs[0], &runs[i], o))
	}
	rep.Warnings = judgeWarnings(runs)
	return rep, nil
}

// judgeWarnings says when runs were judged by different judges: their
// rates then measure the judges as much as the models.
func judgeWarnings(runs []Run) []string {
	var out []string
	for i := 1; i < len(runs); i++ {
		a, b := runs[0], runs[i]
		if a.Judge != b.Judge {
			out = append(out, fmt.Sprintf("runs %s and %s were judged differently (%s vs %s): their rates are not comparable",
				a.ID, b.ID, JudgeLabel(a.Judge), JudgeLabel(b.Judge)))
		}
	}
	return out
}

// Pending is the number of the run's cells whose outcome is still to come.
func (rr *RunReport) Pending() int {
	n := 0
	for _, m := range rr.Ranking {
		n += m.Pending
	}
	return n
}

func rankRun(r *Run, o Options) RunReport {
	rr := RunReport{ID: r.ID, Name: r.Name, Judge: r.Judge}
	byModel := map[string][]*Cell{}
	models := slices.Clone(r.Models)
	for i := range r.Cells {
		c := &r.Cells[i]
		if _, ok := byModel[c.Model]; !ok && !slices.Contains(models, c.Model) {
			models = append(models, c.Model)
		}
		byModel[c.Model] = append(byModel[c.Model], c)
	}
	rr.Categories = categories(r)
	z := zFor(o.Level)
	for _, m := range models {
		rr.Ranking = append(rr.Ranking, modelStats(r, m, byModel[m], rr.Categories, z, o))
	}
	rankAndTie(rr.Ranking, o.By)
	for i := range rr.Ranking {
		for j := i + 1; j < len(rr.Ranking); j++ {
			a, b := rr.Ranking[i].Model, rr.Ranking[j].Model
			rr.Pairs = append(rr.Pairs, paired(a, b, "", outcomesOf(byModel[a]), outcomesOf(byModel[b]), o.Level))
		}
	}
	rr.Judges = agreement(r)
	return rr
}

// categories lists the run's categories in the order of its tests.
func categories(r *Run) []string {
	var out []string
	seen := map[string]bool{}
	tests := slices.Clone(r.Tests)
	for _, c := range r.Cells {
		if !slices.Contains(tests, c.Test) {
			tests = append(tests, c.Test)
		}
	}
	for _, t := range tests {
		if c := r.category(t); !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func modelStats(r *Run, model string, cells []*Cell, cats []string, z float64, o Options) ModelStats {
	s := ModelStats{Model: model}
	groups := map[string][]float64{}
	var order []string
	catCount := map[string]*CategoryStats{}
	var lat, ttft, tps []float64
	for _, c := range cells {
		s.Add(c.Outcome, c.Judged)
		s.PromptTokens += c.PromptTokens
		s.CompletionTokens += c.CompletionTokens
		if c.Latency > 0 {
			lat = append(lat, ms(c.Latency))
		}
		if c.TTFT > 0 {
			ttft = append(ttft, ms(c.TTFT))
		}
		if c.TokensPerSec > 0 {
			tps = append(tps, c.TokensPerSec)
		}
		cat := r.category(c.Test)
		cs := catCount[cat]
		if cs == nil {
			cs = &CategoryStats{Category: cat}
			catCount[cat] = cs
		}
		cs.Add(c.Outcome, c.Judged)
		if !c.Outcome.Decided() {
			continue
		}
		if _, ok := groups[c.Test]; !ok {
			order = append(order, c.Test)
		}
		groups[c.Test] = append(groups[c.Test], c.Score)
	}
	s.Rate = Wilson(s.Pass, s.Rated(), z)
	s.Lowest, s.Highest = s.Bounds()
	// Groups in a fixed order, so the seeded bootstrap draws the same tests.
	gs := make([][]float64, len(order))
	for i, t := range order {
		gs[i] = groups[t]
	}
	if s.Known() {
		s.Score = Bootstrap(gs, o.Seed, o.Resamples, o.Level)
	} else {
		s.Score = Bootstrap(nil, o.Seed, o.Resamples, o.Level)
	}
	for _, cat := range cats {
		cs := catCount[cat]
		if cs == nil {
			cs = &CategoryStats{Category: cat}
		}
		cs.Rate = Wilson(cs.Pass, cs.Rated(), z)
		s.Categories = append(s.Categories, *cs)
	}
	s.LatencyMS, s.TTFTMS, s.TokensPerSec = spreadOf(lat), spreadOf(ttft), spreadOf(tps)
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// interval is the figure a ranking is by.
func (s *ModelStats) interval(by string) Interval {
	if by == ByScore {
		return s.Score
	}
	return s.Rate
}

// rankAndTie sorts models best first (ties by decided cells, then name) and
// fills Rank and Tied. A model with no decided cell ranks last and ties
// with nobody: its [0, 1] interval is ignorance, not a result.
func rankAndTie(ms []ModelStats, by string) {
	slices.SortStableFunc(ms, func(a, b ModelStats) int {
		if (a.Rated() == 0) != (b.Rated() == 0) {
			return cmp.Compare(b.Rated(), a.Rated())
		}
		return cmp.Or(cmp.Compare(b.interval(by).Value, a.interval(by).Value),
			cmp.Compare(b.Rated(), a.Rated()), cmp.Compare(a.Model, b.Model))
	})
	for i := range ms {
		a := ms[i].interval(by)
		ms[i].Rank = 1
		for j := range ms {
			if i == j || ms[j].Rated() == 0 {
				continue
			}
			b := ms[j].interval(by)
			switch {
			case ms[i].Rated() == 0:
				ms[i].Rank++
			case b.Lo > a.Hi:
				ms[i].Rank++
			case a.Overlaps(b):
				ms[i].Tied = append(ms[i].Tied, ms[j].Model)
			}
		}
	}
}

// outcome of an item (test, repeat) for a paired test.
type item struct {
	test   string
	repeat int
}

func outcomesOf(cells []*Cell) map[item]Outcome {
	out := make(map[item]Outcome, len(cells))
	for _, c := range cells {
		out[item{c.Test, c.Repeat}] = c.Outcome
	}
	return out
}

// paired runs McNemar's test of a against b on the items both decided.
// model names the model when a and b are two runs of it.
func paired(a, b, model string, oa, ob map[item]Outcome, level float64) Paired {
	p := Paired{A: a, B: b, Model: model}
	var onlyA, onlyB int
	for it, x := range oa {
		y, ok := ob[it]
		if !ok || !x.Decided() || !y.Decided() {
			continue
		}
		p.Shared++
		switch {
		case x == Pass && y == Pass:
			p.Both++
		case x == Pass:
			onlyA++
		case y == Pass:
			onlyB++
		default:
			p.Neither++
		}
	}
	p.Test = McNemar(onlyA, onlyB)
	if p.Test.P < 1-level {
		p.Better = a
		if onlyB > onlyA {
			p.Better = b
		}
	}
	p.Says = p.say(level)
	return p
}

// say puts a paired test in words.
func (p *Paired) say(level float64) string {
	a, b := p.A, p.B
	if p.Model != "" {
		a, b = p.Model+" in "+p.A, p.Model+" in "+p.B
	}
	t := p.Test
	if t.Method == MethodNone {
		if p.Shared == 0 {
			return fmt.Sprintf("%s and %s share no decided cell: nothing to compare", a, b)
		}
		return fmt.Sprintf("%s and %s passed the same %d of %d shared cells: no difference to test", a, b, p.Both, p.Shared)
	}
	fig := fmt.Sprintf("%s only %s passed, %d only %s passed, %s McNemar p = %s",
		cells(t.OnlyA), p.A, t.OnlyB, p.B, t.Method, FormatP(t.P))
	switch p.Better {
	case "":
		return fmt.Sprintf("%s vs %s: %s; the difference may be noise (not significant at %s)", a, b, fig, pct(1-level))
	case p.A:
		return fmt.Sprintf("%s is better than %s: %s", a, b, fig)
	}
	return fmt.Sprintf("%s is better than %s: %s", b, a, fig)
}

func cells(n int) string {
	if n == 1 {
		return "1 cell"
	}
	return strconv.Itoa(n) + " cells"
}

// FormatP writes a p-value with two significant digits, "< 0.001" below.
func FormatP(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

func pct(x float64) string { return strconv.FormatFloat(math.Round(100000*x)/1000, 'f', -1, 64) + "%" }

// agreement compares every two judges of the run over the cells both judged.
func agreement(r *Run) []JudgeAgreed {
	var judges []string
	for _, j := range r.Judges {
		if j != scoring.JuryName {
			judges = append(judges, j)
		}
	}
	var out []JudgeAgreed
	for i := range judges {
		for k := i + 1; k < len(judges); k++ {
			var va, vb []scoring.Verdict
			for _, c := range r.Cells {
				va = append(va, scoring.Verdict(c.Verdicts[judges[i]]))
				vb = append(vb, scoring.Verdict(c.Verdicts[judges[k]]))
			}
			c := judge.CompareVerdicts(va, vb)
			if c.N == 0 { // a judge configured but never run on this run: nothing to say
				continue
			}
			out = append(out, JudgeAgreed{A: judges[i], B: judges[k], Comparison: c})
		}
	}
	return out
}
