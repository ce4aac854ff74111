package compare

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText prints the report as plain-text tables, for a terminal or a
// CI log: each run's ranking, categories, paired tests of neighbours in the
// ranking and judge agreement, then each diff.
func (rep *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	for _, warn := range rep.Warnings {
		ew.printf("warning: %s\n\n", warn)
	}
	for i := range rep.Runs {
		if i > 0 {
			ew.printf("\n")
		}
		rep.writeRun(ew, &rep.Runs[i])
	}
	for i := range rep.Diffs {
		ew.printf("\n")
		writeDiff(ew, &rep.Diffs[i])
	}
	return ew.err
}

func (rep *Report) writeRun(ew *errWriter, r *RunReport) {
	ew.printf("run %s", r.ID)
	if r.Name != "" {
		ew.printf(" · %s", r.Name)
	}
	ew.printf(" · %s · %s\n", JudgeLabel(r.Judge), rep.Method())
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tmodel\tpass rate\tinterval\tpass/decided\tscore\tscore interval\tlatency p50/p95\tttft p50\ttok/s p50\ttokens in/out\ttied with")
	for _, m := range r.Ranking {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\n",
			RankLabel(m), m.Model, m.RateText(), RangeText(m.Rate, m.Rated()), m.RateNote(),
			Score(m.Score.Value, m.Rated()), ScoreRange(m.Score, m.Rated()),
			MSPair(m.LatencyMS), MS(m.TTFTMS.Median, m.TTFTMS.N), Num(m.TokensPerSec.Median, m.TokensPerSec.N),
			m.PromptTokens, m.CompletionTokens, tiedText(m.Tied))
	}
	_ = tw.Flush()
	if n := r.Pending(); n > 0 {
		ew.printf("provisional: %d cells pending (in inference or awaiting the judge); a rate with a range is its lowest–highest\n", n)
	}
	if len(r.Categories) > 1 {
		ew.printf("\nby category (pass/decided)\n")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "model\t"+strings.Join(r.Categories, "\t"))
		for _, m := range r.Ranking {
			cols := []string{m.Model}
			for _, c := range m.Categories {
				if !c.Known() {
					cols = append(cols, "—")
					continue
				}
				cols = append(cols, c.RateNote()+" "+c.RateText())
			}
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
		_ = tw.Flush()
	}
	if near := Neighbours(r); len(near) > 0 {
		ew.printf("\npaired tests (McNemar), each model against the next in the ranking\n")
		for _, p := range near {
			ew.printf("  %s\n", p.Says)
		}
	}
	for _, j := range r.Judges {
		ew.printf("judges %s and %s: %s\n", j.A, j.B, AgreementText(j))
	}
}

func writeDiff(ew *errWriter, d *Diff) {
	ew.printf("run %s → run %s: %d shared cells, %d fixed, %d broke, %d flipped", d.Base, d.Other,
		d.Shared, len(d.Fixed), len(d.Broke), len(d.Flipped))
	if !d.SameBattery {
		ew.printf(" (the batteries differ: only the tests both ran are compared)")
	}
	ew.printf("\n")
	for _, g := range []struct {
		name string
		cs   []Change
	}{{"fixed", d.Fixed}, {"broke", d.Broke}, {"flipped", d.Flipped}} {
		for _, c := range g.cs {
			ew.printf("  %-7s %s\n", g.name, ChangeText(c))
		}
	}
	for _, p := range d.Models {
		ew.printf("  %s\n", p.Says)
	}
	for _, p := range d.Cross {
		ew.printf("  %s\n", p.Says)
	}
}

// Neighbours are the paired tests of each model against the next one in
// the ranking: the comparisons a reader of a ranking asks about.
func Neighbours(r *RunReport) []Paired {
	var out []Paired
	for i := 0; i+1 < len(r.Ranking); i++ {
		a, b := r.Ranking[i].Model, r.Ranking[i+1].Model
		for _, p := range r.Pairs {
			if p.A == a && p.B == b {
				out = append(out, p)
			}
		}
	}
	return out
}

// Method says what a report's intervals are.
func (rep *Report) Method() string {
	if rep.By == ByScore {
		return "ranked by mean score, " + pct(rep.Level) + " bootstrap intervals over tests"
	}
	return "ranked by pass rate, " + pct(rep.Level) + " Wilson intervals"
}

// JudgeLabel names the judge whose verdicts a run's figures use.
func JudgeLabel(j string) string {
	if j == "" {
		return "checks only (no judge)"
	}
	return "judge " + j
}

// RankLabel is a model's rank, "=" before it when it is tied.
func RankLabel(m ModelStats) string {
	if m.Rated() == 0 {
		return "—"
	}
	if len(m.Tied) > 0 {
		return "=" + strconv.Itoa(m.Rank)
	}
	return strconv.Itoa(m.Rank)
}

func tiedText(t []string) string {
	if len(t) == 0 {
		return "—"
	}
	return strings.Join(t, ", ")
}

// Percent is a rate as a whole percentage, "—" with nothing decided.
func Percent(x float64, n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.Itoa(int(100*x+0.5)) + "%"
}

// RangeText is an interval in percent: "[57%, 93%]".
func RangeText(iv Interval, n int) string {
	if n == 0 {
		return "—"
	}
	return "[" + Percent(iv.Lo, n) + ", " + Percent(iv.Hi, n) + "]"
}

// Score is a mean score with two decimals.
func Score(x float64, n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// ScoreRange is a score interval: "[0.61, 0.83]".
func ScoreRange(iv Interval, n int) string {
	if n == 0 {
		return "—"
	}
	return "[" + Score(iv.Lo, n) + ", " + Score(iv.Hi, n) + "]"
}

// MS is milliseconds, whole.
func MS(x float64, n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', 0, 64) + " ms"
}

// MSPair is a spread's median and p95 in milliseconds.
func MSPair(s Spread) string {
	if s.N == 0 {
		return "—"
	}
	return strconv.FormatFloat(s.Median, 'f', 0, 64) + "/" + strconv.FormatFloat(s.P95, 'f', 0, 64) + " ms"
}

// Num is a figure with one decimal.
func Num(x float64, n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// AgreementText is two judges' agreement in words.
func AgreementText(j JudgeAgreed) string {
	if j.N == 0 {
		return "no cell judged by both"
	}
	return fmt.Sprintf("agree on %s of %d cells, Cohen's κ %.2f", Percent(j.Agreement, j.N), j.N, j.Kappa)
}

// ChangeText is one changed cell: "qwen × arithmetic #1: fail → pass".
func ChangeText(c Change) string {
	return fmt.Sprintf("%s × %s #%d: %s → %s", c.Model, c.Test, c.Repeat+1, c.From, c.To)
}

// errWriter keeps the first write error, so a report's many prints need one check.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }
