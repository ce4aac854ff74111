package history

import (
	"fmt"
	"io"
	"strings"
	"time"

	"pitwall/runner/compare"
)

// writeMarkdown writes a report for a pull request or an issue: per run its
// header and summary, the ranking with intervals, categories, the paired
// tests, the grid and the cells that did not pass; then what changed
// between runs. Text from the run (ids, outputs, errors) is escaped so it
// can neither break a table nor turn into markup.
func writeMarkdown(w io.Writer, xs []*Export, rep *compare.Report) error {
	ew := &errw{w: w}
	for i, x := range xs {
		if i > 0 {
			ew.line("")
		}
		mdRun(ew, x, rep, &rep.Runs[i], len(xs) > 1)
	}
	for i := range rep.Diffs {
		ew.line("")
		mdDiff(ew, &rep.Diffs[i])
	}
	return ew.err
}

func mdRun(ew *errw, x *Export, rep *compare.Report, rr *compare.RunReport, several bool) {
	h := "#"
	if several {
		h = "##"
	}
	title := "run " + x.Run.ID
	if x.Run.Name != "" {
		title = x.Run.Name + " · " + title
	}
	ew.line(h + " pitwall · " + mdText(title))
	ew.line("")
	ew.line(mdText(header(x)))
	ew.line("")
	ew.line("**Summary:** " + mdText(summary(x)))
	ew.line("")
	if len(x.Warnings) > 0 {
		ew.line("**Battery warnings:** what the battery asked for that pitwall loaded but did not act on:")
		ew.line("")
		for _, w := range x.Warnings {
			ew.line("- " + mdText(w))
		}
		ew.line("")
	}

	ew.line(h + "# Ranking")
	ew.line("")
	ew.line(mdText(rep.Method()) + ". A rank with = is a tie: the model's interval overlaps another's, so the battery cannot tell them apart.")
	ew.line("")
	ew.line("| rank | model | pass rate | 95% interval | pass / decided | score | score interval | latency p50 / p95 | TTFT p50 | tok/s p50 | tokens in / out | tied with |")
	ew.line("|---:|---|---:|---|---:|---:|---|---:|---:|---:|---:|---|")
	for _, m := range rr.Ranking {
		ew.row(compare.RankLabel(m), mdCode(m.Model), m.RateText(), compare.RangeText(m.Rate, m.Rated()),
			m.RateNote(), compare.Score(m.Score.Value, m.Rated()), compare.ScoreRange(m.Score, m.Rated()),
			compare.MSPair(m.LatencyMS), compare.MS(m.TTFTMS.Median, m.TTFTMS.N), compare.Num(m.TokensPerSec.Median, m.TokensPerSec.N),
			fmt.Sprintf("%d / %d", m.PromptTokens, m.CompletionTokens), mdList(m.Tied))
	}
	if near := compare.Neighbours(rr); len(near) > 0 {
		ew.line("")
		ew.line("Paired tests (McNemar, on the cells both models decided), each model against the next:")
		ew.line("")
		for _, p := range near {
			ew.line("- " + mdText(p.Says))
		}
	}
	for _, j := range rr.Judges {
		ew.line("- judges " + mdCode(j.A) + " and " + mdCode(j.B) + ": " + mdText(compare.AgreementText(j)))
	}
	if len(rr.Categories) > 1 {
		ew.line("")
		ew.line(h + "# By category")
		ew.line("")
		cols := []string{"model"}
		for _, c := range rr.Categories {
			cols = append(cols, mdText(c))
		}
		ew.line("| " + strings.Join(cols, " | ") + " |")
		ew.line("|---" + strings.Repeat("|---:", len(rr.Categories)) + "|")
		for _, m := range rr.Ranking {
			cells := []string{mdCode(m.Model)}
			for _, c := range m.Categories {
				if !c.Known() {
					cells = append(cells, "—")
					continue
				}
				cells = append(cells, fmt.Sprintf("%s (%s)", c.RateText(), c.RateNote()))
			}
			ew.row(cells...)
		}
	}
	mdGrid(ew, x, h)
	mdFailures(ew, x, h)
	mdTrajectories(ew, x)
}

func mdGrid(ew *errw, x *Export, h string) {
	g := gridOf(x)
	ew.line("")
	ew.line(h + "# Grid")
	ew.line("")
	cats, sevs := false, x.hasSeverities() // a column of dashes says nothing
	for _, t := range x.Tests {
		cats = cats || x.Categories[t] != ""
	}
	head, rule := []string{"test"}, "|---"
	if cats {
		head, rule = append(head, "category"), rule+"|---"
	}
	if sevs {
		head, rule = append(head, "severity"), rule+"|---"
	}
	for _, m := range x.Models {
		head = append(head, mdCode(m))
	}
	head = append(head, "pass rate")
	ew.line("| " + strings.Join(head, " | ") + " |")
	ew.line(rule + strings.Repeat("|:---:", len(x.Models)) + "|---:|")
	for _, t := range x.Tests {
		row := []string{mdCode(t)}
		if cats {
			row = append(row, mdText(x.category(t)))
		}
		if sevs {
			row = append(row, mdText(x.severity(t)))
		}
		for _, m := range x.Models {
			row = append(row, marks(g.at(t, m)))
		}
		row = append(row, rateText(g.rate(t, "")))
		ew.row(row...)
	}
	foot := []string{"**pass rate**"}
	if cats {
		foot = append(foot, "")
	}
	if sevs {
		foot = append(foot, "")
	}
	for _, m := range x.Models {
		foot = append(foot, rateText(g.rate("", m)))
	}
	foot = append(foot, rateText(g.rate("", "")))
	ew.row(foot...)
	ew.line("")
	ew.line("<sub>" + mdText(legend) + "</sub>")
}

// marks is the marks of a cell's repeats; one repeat carries its score.
func marks(cs []*ExportCell) string {
	if len(cs) == 0 {
		return "·"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = mark(c, len(cs) == 1)
	}
	return strings.Join(parts, " ")
}

// mdFailures lists the cells that did not pass, folded, with their tests'
// severities when the battery gives any.
func mdFailures(ew *errw, x *Export, h string) {
	sevs := x.hasSeverities()
	var rows [][]string
	for i := range x.Cells {
		c := &x.Cells[i]
		o := outcome(c)
		if o == compare.Pass || o == compare.None || o.Pending() {
			continue
		}
		row := []string{mdCode(c.Test)}
		if sevs {
			row = append(row, mdText(x.severity(c.Test)))
		}
		rows = append(rows, append(row, mdCode(c.Model), fmt.Sprint(c.Repeat+1), mark(c, true),
			mdText(clip(why(c), 300)), mdText(clip(c.Output, 200))))
	}
	if len(rows) == 0 {
		return
	}
	ew.line("")
	ew.line(fmt.Sprintf("<details><summary>%d cells did not pass</summary>", len(rows)))
	ew.line("")
	if sevs {
		ew.line("| test | severity | model | repeat | result | why | output |")
		ew.line("|---|---|---|---:|---|---|---|")
	} else {
		ew.line("| test | model | repeat | result | why | output |")
		ew.line("|---|---|---:|---|---|---|")
	}
	for _, r := range rows {
		ew.row(r...)
	}
	ew.line("")
	ew.line("</details>")
}

// Clips for a trajectory in Markdown: enough of a call's arguments to tell
// calls apart and of an observation to see what came back; the JSON export
// has them whole.
const (
	mdArgsClip = 120
	mdObsClip  = 160
	mdTextClip = 300
)

// mdTrajectories lists each agent cell's loop, folded: per step its tool
// calls with their arguments and observations (clipped), and the answer
// the loop ended with.
func mdTrajectories(ew *errw, x *Export) {
	var cells []*ExportCell
	for i := range x.Cells {
		if len(x.Cells[i].Steps) > 0 {
			cells = append(cells, &x.Cells[i])
		}
	}
	if len(cells) == 0 {
		return
	}
	ew.line("")
	ew.line(fmt.Sprintf("<details><summary>%d agent cells' trajectories</summary>", len(cells)))
	for _, c := range cells {
		ew.line("")
		n := "steps"
		if len(c.Steps) == 1 {
			n = "step"
		}
		ew.line(fmt.Sprintf("**%s × %s #%d** · %d %s · %s", mdCode(c.Model), mdCode(c.Test), c.Repeat+1, len(c.Steps), n, mark(c, true)))
		ew.line("")
		for _, s := range c.Steps {
			ew.line(fmt.Sprintf("%d. %s", s.Step, mdStep(s)))
		}
		if last := c.Steps[len(c.Steps)-1]; len(last.Calls) > 0 {
			// The loop ended on calls (max iterations, stagnation): no answer.
			end := "No final answer."
			if w := why(c); w != "" {
				end = "No final answer: " + mdText(clip(w, mdTextClip))
			}
			ew.line("")
			ew.line(end)
		}
	}
	ew.line("")
	ew.line("</details>")
}

// mdStep is one step on one line: its calls, each with what it was answered
// with, or, for a step that made none, its answer.
func mdStep(s ExportStep) string {
	if len(s.Calls) == 0 {
		return "answer: " + mdText(clip(s.Content, mdTextClip))
	}
	parts := make([]string, len(s.Calls))
	for i, c := range s.Calls {
		obs := "(no observation)"
		if c.Observation != nil {
			obs = mdText(clip(*c.Observation, mdObsClip))
		}
		parts[i] = mdCode(c.Name) + " " + mdCode(clip(c.Arguments, mdArgsClip)) + " → " + obs
	}
	out := strings.Join(parts, "; ")
	if t := strings.TrimSpace(s.Content); t != "" {
		out = mdText(clip(t, mdArgsClip)) + " — " + out
	}
	return out
}

func mdDiff(ew *errw, d *compare.Diff) {
	ew.line("## Changes: run " + mdText(d.Base) + " → run " + mdText(d.Other))
	ew.line("")
	s := fmt.Sprintf("%d cells decided in both runs: %d fixed, %d broke, %d flipped.", d.Shared, len(d.Fixed), len(d.Broke), len(d.Flipped))
	if !d.SameBattery {
		s += " The batteries differ: only the tests both ran are compared."
	}
	ew.line(s)
	ew.line("")
	for _, p := range d.Models {
		ew.line("- " + mdText(p.Says))
	}
	for _, p := range d.Cross {
		ew.line("- " + mdText(p.Says))
	}
	var rows [][]string
	for _, g := range []struct {
		name string
		cs   []compare.Change
	}{{"fixed", d.Fixed}, {"broke", d.Broke}, {"flipped", d.Flipped}} {
		for _, c := range g.cs {
			rows = append(rows, []string{g.name, mdCode(c.Model), mdCode(c.Test), fmt.Sprint(c.Repeat + 1),
				string(c.From) + " → " + string(c.To)})
		}
	}
	if len(rows) == 0 {
		return
	}
	ew.line("")
	ew.line("| change | model | test | repeat | outcome |")
	ew.line("|---|---|---|---:|---|")
	for _, r := range rows {
		ew.row(r...)
	}
}

// header is a run's status line: status, judge, times, shape.
func header(x *Export) string {
	parts := []string{x.Run.Status, compare.JudgeLabel(x.Judge)}
	if !x.Run.StartedAt.IsZero() {
		t := x.Run.StartedAt.UTC().Format("2006-01-02 15:04 MST")
		if x.Run.EndedAt != nil {
			t += " (" + x.Run.EndedAt.Sub(x.Run.StartedAt).Round(time.Second).String() + ")"
		}
		parts = append(parts, t)
	}
	parts = append(parts, fmt.Sprintf("%d models × %d tests", len(x.Models), len(x.Tests)))
	if x.Run.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *x.Run.ExitCode))
	}
	return strings.Join(parts, " · ")
}

// summary counts a run's cells by status and verdict.
func summary(x *Export) string {
	s := fmt.Sprintf("%d cells", x.Summary.Cells)
	var st []string
	for _, k := range []string{"completed", "failed", "error", "cancelled", "pending"} {
		if n := x.Summary.ByStatus[k]; n > 0 {
			st = append(st, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(st) > 0 {
		s += ": " + strings.Join(st, ", ")
	}
	var vs []string
	for _, k := range []string{"pass", "fail", "warn", "error", "none"} {
		if n := x.Summary.ByVerdict[k]; n > 0 {
			vs = append(vs, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(vs) > 0 {
		s += " · verdicts: " + strings.Join(vs, ", ")
	}
	return s
}

// mdReplacer escapes text for a GitHub-flavoured Markdown table cell: the
// characters that make markup, pipes (which end a cell) and line breaks
// (which end a row).
var mdReplacer = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "#", `\#`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;", "\r\n", " ", "\n", " ", "\r", " ",
)

func mdText(s string) string { return mdReplacer.Replace(s) }

// mdCode is a name as inline code. Inside a code span only a pipe (in a
// table) and a backtick need care: the span's fence is longer than any run
// of backticks in s.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

func mdList(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mdCode(n)
	}
	return strings.Join(out, ", ")
}

// errw writes lines and keeps the first error.
type errw struct {
	w   io.Writer
	err error
}

func (e *errw) line(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s+"\n")
	}
}

// row writes a table row of cells already escaped.
func (e *errw) row(cells ...string) { e.line("| " + strings.Join(cells, " | ") + " |") }
