package ui

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// detail shows everything about one cell: the prompt, each repeat's reply,
// checks, error and timing, and every judge's samples and verdict, with the
// jury's aggregate. It scrolls; esc goes back to the grid.
type detail struct {
	c             *common
	width, height int
	vp            viewport.Model

	t, m  int
	row   *state.Row // what the content was built from
	judge string
	built int // width it was built for
	// whole are the open cell's repeats read whole from the ledger, where
	// the snapshot keeps a preview (detail_whole.go).
	whole    map[int]*state.Cell
	wholeErr error
	loading  bool
}

func newDetail(c *common) *detail {
	vp := viewport.New()
	return &detail{c: c, vp: vp}
}

// SetSize gives the view its part of the screen: a title line and the text.
func (d *detail) SetSize(w, h int) {
	d.width, d.height = w, h
	d.vp.SetWidth(w)
	d.vp.SetHeight(max(h-1, 1))
}

// open shows cell (t, m) of run from the top, and reads from the ledger
// what the snapshot keeps only a preview of.
func (d *detail) open(run *state.BatteryRun, t, m int, judge string) tea.Cmd {
	d.t, d.m = t, m
	d.row = nil
	d.whole, d.wholeErr, d.loading = nil, nil, false
	cmd := d.readWhole(run)
	d.refresh(run, judge)
	d.vp.GotoTop()
	return cmd
}

// refresh rebuilds the text when the cell's row, the judge or the width
// changed, keeping the scroll position.
func (d *detail) refresh(run *state.BatteryRun, judge string) {
	row := rowAt(run, d.t)
	if row == d.row && judge == d.judge && d.built == d.width && row != nil {
		return
	}
	d.row, d.judge, d.built = row, judge, d.width
	off := d.vp.YOffset()
	d.vp.SetContent(buildDetail(d.c, run, d.t, d.m, judge, max(d.width-1, 20), d.whole, d.previewNote()))
	d.vp.SetYOffset(off)
}

// Update scrolls.
func (d *detail) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	d.vp, cmd = d.vp.Update(msg)
	return cmd
}

func (d *detail) top()    { d.vp.GotoTop() }
func (d *detail) bottom() { d.vp.GotoBottom() }

// View draws the title line and the visible text.
func (d *detail) View(run *state.BatteryRun) string {
	st := d.c.styles
	title := ""
	if run != nil && d.t < len(run.Tests) && d.m < len(run.Models) {
		title = " " + esc(run.Models[d.m]) + " " + d.c.glyphs.times + " " + esc(run.Tests[d.t].ID)
	}
	// Named as a scroll position: a bare percentage reads as a pass rate.
	right := "esc back "
	if d.vp.TotalLineCount() > d.vp.Height() {
		right = "scroll " + strconv.Itoa(int(d.vp.ScrollPercent()*100)) + "% · " + right
	}
	lw := d.c.sw(title)
	rw := d.c.sw(right)
	var line string
	if lw+rw+1 > d.width {
		line = st.title.Render(d.c.cut(title, d.width))
	} else {
		line = st.title.Render(title) + strings.Repeat(" ", d.width-lw-rw) + st.dim.Render(right)
	}
	return line + "\n" + d.vp.View()
}

// detailWriter builds the text of the detail view, wrapped to a width.
type detailWriter struct {
	c     *common
	sb    strings.Builder
	width int
}

func (w *detailWriter) section(title string) {
	if w.sb.Len() > 0 {
		w.sb.WriteString("\n")
	}
	w.sb.WriteString(w.c.styles.section.Render(title))
	w.sb.WriteString("\n")
}

// line writes one line, indented, cut to the width.
func (w *detailWriter) line(indent int, s string) {
	w.sb.WriteString(strings.Repeat(" ", indent))
	w.sb.WriteString(w.c.cut(s, w.width-indent))
	w.sb.WriteString("\n")
}

// para writes text wrapped to the width, indented.
func (w *detailWriter) para(indent int, text string) {
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if strings.TrimSpace(text) == "" {
		w.line(indent, w.c.styles.dim.Render("(empty)"))
		return
	}
	wrapped := w.c.wm.Wrap(strings.ReplaceAll(text, "\t", "    "), max(w.width-indent, 10), "")
	for _, l := range strings.Split(wrapped, "\n") {
		w.sb.WriteString(strings.Repeat(" ", indent))
		w.sb.WriteString(l)
		w.sb.WriteString("\n")
	}
}

// names writes a line of names (a test id, a model), wrapped at spaces and
// at the marks names are made of, so that a long id breaks between its
// parts rather than leaving "Test" alone on its line.
func (w *detailWriter) names(text string) {
	w.sb.WriteString(w.c.wm.Wrap(text, max(w.width, 10), "_-/.:"))
	w.sb.WriteString("\n")
}

func buildDetail(c *common, run *state.BatteryRun, t, m int, judge string, width int, whole map[int]*state.Cell, note string) string {
	if run == nil || t >= len(run.Tests) || m >= len(run.Models) {
		return ""
	}
	w := &detailWriter{c: c, width: width}
	shown := shownTest(run.Tests[t])
	test := &shown
	g := c.glyphs

	head := "Test " + test.ID
	if test.Name != "" && test.Name != test.ID {
		head += " — " + test.Name
	}
	if test.Category != "" {
		head += " · category " + test.Category
	}
	if test.Severity != "" {
		head += " · severity " + test.Severity
		if critical(test) {
			head += " " + g.critical
		}
	}
	// The grid cuts long names; here they are whole, wrapped.
	w.names(head)
	w.names("Model " + esc(run.Models[m]))

	w.section("Prompt")
	if test.System != "" {
		w.line(2, c.styles.title.Render("System"))
		w.para(4, test.System)
	}
	w.line(2, c.styles.title.Render("User"))
	w.para(4, test.Prompt)
	if len(test.Tools) > 0 {
		w.line(2, c.styles.title.Render("Tools"))
		for _, tool := range test.Tools {
			desc := tool.Function.Name
			if tool.Function.Description != "" {
				desc += " — " + tool.Function.Description
			}
			w.para(4, desc)
			if tool.Function.Parameters != nil {
				if b, err := json.Marshal(tool.Function.Parameters); err == nil {
					w.para(6, c.styles.dim.Render(esc(string(b))))
				}
			}
		}
	}
	if test.Criteria != "" {
		w.section("Criteria")
		w.para(2, test.Criteria)
	}
	if test.Reference != "" {
		w.section("Reference")
		w.para(2, test.Reference)
	}

	cells := repeats(run, t, m)
	for r := range cells {
		full := shownCell(withWhole(*cells[r], whole[r]))
		cell := &full
		k := repeatKind(cell, "")
		head := "Repeat " + strconv.Itoa(r+1) + " of " + strconv.Itoa(len(cells))
		if len(cells) == 1 {
			head = "Inference"
		}
		head += " · " + g.glyph(k, 0) + " " + string(cell.Status)
		if cell.Server != "" {
			head += " · server " + cell.Server
		}
		if cell.Attempts > 1 {
			head += " · " + strconv.Itoa(cell.Attempts) + " attempts"
		}
		w.section(head)
		writeCell(w, cell)
		if cell.Clipped && note != "" {
			w.line(4, c.styles.dim.Render(note))
		}
		writeJudgments(w, run, cell, judge)
	}
	return strings.TrimRight(w.sb.String(), "\n")
}

func writeCell(w *detailWriter, cell *state.Cell) {
	c, g := w.c, w.c.glyphs
	said := cell.Said()
	if len(said.Steps) > 0 {
		writeSteps(w, cell)
	} else {
		writeReply(w, cell)
	}
	writeChecks(w, cell)
	if said.Error != "" || said.ErrorClass != "" {
		w.line(2, c.styles.title.Render("Error"))
		msg := string(said.ErrorClass)
		if said.Error != "" {
			if msg != "" {
				msg += ": "
			}
			msg += said.Error
		}
		w.para(4, c.styles.kind[kindErrored].Render(g.errored)+" "+msg)
	}
	if cell.Latency > 0 || cell.TTFT > 0 {
		w.line(2, c.styles.title.Render("Timing"))
		parts := []string{"TTFT " + shortDur(cell.TTFT), "latency " + shortDur(cell.Latency)}
		if cell.TokensPerSec > 0 {
			parts = append(parts, strconv.FormatFloat(cell.TokensPerSec, 'f', 1, 64)+" tok/s")
		}
		parts = append(parts, strconv.Itoa(cell.PromptTokens)+" prompt + "+strconv.Itoa(cell.CompletionTokens)+" completion tokens")
		if cell.Server != "" {
			parts = append(parts, "on "+cell.Server)
		}
		w.para(4, strings.Join(parts, " · "))
	}
	if said.PromptCut > 0 {
		w.para(4, c.styles.alert.Render(PromptCutText(said.PromptCut)))
	}
}

// PromptCutText says a prompt was cut to a model's context of n tokens.
func PromptCutText(n int) string {
	return "prompt cut: the server kept only the last " + strconv.Itoa(n) +
		" tokens (the model's context); raise its context (Ollama's num_ctx) to send it whole"
}

// writeReply writes a one-request cell's reply and reasoning.
func writeReply(w *detailWriter, cell *state.Cell) {
	c := w.c
	said := cell.Said()
	if cell.Status.Terminal() && cell.Status != state.Cancelled || said.Output != "" || len(said.ToolCalls) > 0 {
		w.line(2, c.styles.title.Render("Reply"))
		if said.Output != "" || len(said.ToolCalls) == 0 {
			w.para(4, said.Output)
		}
		for _, tc := range said.ToolCalls {
			w.para(4, "→ "+tc.Name+"("+tc.Arguments+")")
		}
		if said.FinishReason != "" {
			w.line(4, c.styles.dim.Render("finish: "+said.FinishReason))
		}
	}
	if said.Reasoning != "" {
		w.line(2, c.styles.title.Render("Reasoning"))
		w.para(4, c.styles.dim.Render(said.Reasoning))
	}
}

// writeChecks lists the cell's checks, a failed one with its reason.
func writeChecks(w *detailWriter, cell *state.Cell) {
	c, g := w.c, w.c.glyphs
	if len(cell.Said().Checks) > 0 {
		w.line(2, c.styles.title.Render("Checks"))
		for _, ch := range cell.Said().Checks {
			mark := c.styles.kind[kindOK].Render(g.ok)
			if !ch.Pass {
				mark = c.styles.kind[kindFailed].Render(g.failed)
			}
			w.line(4, mark+" "+ch.Name)
			if !ch.Pass && ch.Reason != "" {
				w.para(7, ch.Reason)
			}
		}
	}
}

// writeJudgments lists every judge's judgment of the cell, configured judges
// first in their order, the one in view marked.
func writeJudgments(w *detailWriter, run *state.BatteryRun, cell *state.Cell, judge string) {
	if len(cell.Judgments) == 0 {
		return
	}
	c := w.c
	var names []string
	seen := map[string]bool{}
	for _, n := range run.Plan.Choices() {
		if cell.Judgment(n) != nil && !seen[n] {
			names = append(names, n)
			seen[n] = true
		}
	}
	var rest []string
	for _, j := range cell.Judgments {
		if !seen[j.Judge] {
			rest = append(rest, j.Judge)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)

	w.line(2, c.styles.title.Render("Judges"))
	for _, n := range names {
		j := cell.Judgment(n)
		mark := "  "
		if n == judge {
			mark = c.glyphs.cursor + " "
		}
		w.line(2, mark+esc(n)+"  "+judgmentSummary(c, j))
		if j.Error != "" {
			w.para(6, c.styles.kind[kindJudgeError].Render(j.Error))
		}
		for i, s := range j.Samples {
			writeSample(w, i, s)
		}
		if j.Jury != nil {
			writeJury(w, j.Jury)
		}
	}
}

func judgmentSummary(c *common, j *state.Judgment) string {
	if j.Status != state.JudgmentDone {
		return c.styles.kind[kindJudging].Render(string(j.Status) + c.glyphs.ellipsis)
	}
	k := verdictKind(j.Verdict)
	parts := []string{c.styles.kind[k].Render(c.glyphs.glyph(k, 0) + scoreText(k, j.Score))}
	if len(j.Samples) > 1 {
		parts = append(parts, "agreement "+strconv.Itoa(int(j.Agreement*100+0.5))+"%")
	}
	if j.Latency > 0 {
		parts = append(parts, shortDur(j.Latency))
	}
	if j.Source != "" {
		parts = append(parts, j.Source)
	}
	return strings.Join(parts, " · ")
}

func scoreText(k kind, score float64) string {
	if k == kindJudgeError {
		return ""
	}
	return " " + strconv.FormatFloat(score, 'f', 2, 64)
}

func writeSample(w *detailWriter, i int, s scoring.Sample) {
	c := w.c
	k := kindFail
	if s.Pass {
		k = kindPass
	}
	if s.ParseErr != "" {
		k = kindJudgeError
	}
	head := "sample " + strconv.Itoa(i+1) + "  " + c.styles.kind[k].Render(c.glyphs.glyph(k, 0)+scoreText(k, s.Score))
	if s.Reason != "" {
		head += "  " + s.Reason
	}
	w.para(6, head)
	if s.ParseErr != "" {
		w.para(8, "parse error: "+s.ParseErr)
		if s.Raw != "" {
			w.para(8, c.styles.dim.Render(s.Raw))
		}
	}
	if s.Reasoning != "" {
		w.para(8, c.styles.dim.Render(s.Reasoning))
	}
}

func writeJury(w *detailWriter, j *scoring.JuryResult) {
	c := w.c
	var votes []string
	for _, jr := range j.Judges {
		k := verdictKind(jr.Verdict)
		votes = append(votes, jr.Judge+" "+c.glyphs.glyph(k, 0)+scoreText(k, jr.Score)+" (weight "+strconv.FormatFloat(jr.Weight, 'f', -1, 64)+")")
	}
	if len(votes) > 0 {
		w.para(6, "votes: "+strings.Join(votes, " · "))
	}
	agg := "aggregate " + strconv.FormatFloat(j.Score, 'f', 2, 64) +
		" · stddev " + strconv.FormatFloat(j.StdDev, 'f', 2, 64) +
		" · spread " + strconv.FormatFloat(j.Spread, 'f', 2, 64)
	if j.Disagreement {
		agg += " · " + c.styles.kind[kindWarn].Render("judges disagree")
	}
	w.para(6, agg)
}
