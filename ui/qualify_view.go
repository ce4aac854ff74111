package ui

import (
	"strconv"
	"strings"
	"time"

	"pitwall/judge/scoring"
)

// The qualify screen's fixed parts: three header lines, the grid's own
// header, a blank line over the figures, the footer (the figures count
// their own header).
const (
	qualifyHeaderH = 3
	qualifyFixedH  = qualifyHeaderH + 1 + 1 + footerH
	expectW        = 6 // "expect"
	minCaseW       = 12
	maxJudgeColW   = 16
)

// qualifyMarks are a cell's marks: right, wrong and J-ERR. ✗ is not in
// glyphs: in the run's grid a failure is ❌, and here a wrong verdict is
// the judge's failure, not the candidate's.
func (m *qualifyModel) qualifyMarks() (right, wrong, jerr string) {
	g := m.c.glyphs
	if m.c.opts.ASCII {
		return g.ok, "NO", g.judgeError
	}
	return g.ok, "✗", g.errored + " " + g.judgeError
}

// figuresH is the lines the judges' figures take, their header included.
func (m *qualifyModel) figuresH() int {
	n := 1
	if m.q != nil {
		n += len(m.q.Figures)
	}
	return min(n, max(m.c.height/3, 2))
}

// gridRows is how many cases the screen shows at once.
func (m *qualifyModel) gridRows() int {
	return max(m.c.height-qualifyFixedH-m.figuresH(), 1)
}

func (m *qualifyModel) render() string {
	s := m.frameText()
	if m.c.opts.ASCII {
		s = asciiFold.Replace(s)
	}
	return s
}

func (m *qualifyModel) frameText() string {
	w, h := m.c.width, m.c.height
	if w == 0 || h == 0 {
		return ""
	}
	if s, ok := m.c.tooSmall(); ok {
		return s
	}
	lines := m.headerLines()
	grid := m.gridLines()
	// The figures sit right under the cases; what the screen has left
	// over goes below them.
	lines = append(lines, grid...)
	lines = append(lines, "")
	lines = append(lines, m.figureLines()...)
	for len(lines) < h-footerH {
		lines = append(lines, "")
	}
	k := m.c.keys
	lines = append(lines[:h-footerH], m.help.short(k.Qualify.footer()))
	return strings.Join(lines, "\n")
}

// headerLines are the title, the progress and the status line.
func (m *qualifyModel) headerLines() []string {
	st, w := m.c.styles, m.c.width
	hd := header{c: m.c, width: w}
	q := m.q
	if q == nil {
		return []string{st.title.Render(" pitwall qualify"), " waiting for the judges…", ""}
	}
	title := " pitwall qualify · " + q.Name
	if q.Run != "" {
		title += " · run " + q.Run
	}
	shape := plural(len(q.Rows), "case") + " " + m.c.glyphs.times + " " + plural(len(q.Judges), "judge") +
		" " + m.c.glyphs.times + " " + plural(q.Samples, "sample")
	line1 := hd.split(st.title.Render(title), st.title.Render(shape+" "))

	now := m.c.now()
	end := q.Ended
	if end.IsZero() {
		end = now
	}
	elapsed := time.Duration(0)
	if !q.Started.IsZero() {
		elapsed = max(end.Sub(q.Started), 0)
	}
	n := strconv.Itoa
	var parts []string
	switch {
	case q.Final && q.Answers >= q.Total:
		parts = append(parts, " Done "+n(q.Answers)+"/"+n(q.Total)+" answers")
	case q.Final:
		parts = append(parts, " Stopped "+n(q.Answers)+"/"+n(q.Total)+" answers")
	default:
		parts = append(parts, " Judging "+n(q.Answers)+"/"+n(q.Total)+" "+hd.bar(q.Answers, q.Total)+" "+percent(q.Answers, q.Total))
	}
	if elapsed > 0 {
		parts = append(parts, clock(elapsed))
	}
	if !q.Final && q.Answers > 0 && q.Answers < q.Total && elapsed > 0 {
		eta := time.Duration(float64(elapsed) * float64(q.Total-q.Answers) / float64(q.Answers))
		parts = append(parts, "ETA "+clock(eta))
	}
	if q.Final {
		parts = append(parts, "q quits and prints the table")
	}
	line2 := m.c.cut(strings.Join(parts, " · "), w)

	status, alert := q.Message, false
	switch m.ask {
	case askQuit:
		status, alert = "Quit? The qualification stops; the figures count the answers in. [y/N]", true
	case askInterrupt:
		status, alert = "Interrupt? The qualification stops and pitwall exits 130. [y/N]", true
	}
	line3 := ""
	if status != "" {
		p := st.status
		if alert {
			p = st.alert
		}
		line3 = " " + p.Render(m.c.cut(status, w-1))
	}
	return []string{line1, line2, line3}
}

// qualifyCols is how the grid's columns share the width.
type qualifyCols struct {
	caseW    int
	colW     []int // by judge: its name, up to maxJudgeColW, or its widest cell
	from, to int   // the judges shown: Judges[from:to]
}

func (m *qualifyModel) columns() qualifyCols {
	q, w := m.q, m.c.width
	right, _, jerr := m.qualifyMarks()
	cellW := max(m.c.sw(jerr), m.c.sw(right+" "+m.c.glyphs.fail))
	cols := qualifyCols{colW: make([]int, len(q.Judges))}
	all := 1 + 1 + expectW + 1 // gutter, the gap after the case, expect, trailing
	for i, j := range q.Judges {
		// A judge waits on its samples, the jury on every judge's: 12/15.
		of := q.Samples
		for _, r := range q.Rows {
			if i < len(r.Cells) {
				of = max(of, r.Cells[i].Of)
			}
		}
		cols.colW[i] = max(cellW, m.pendingW(of), min(m.c.sw(j), maxJudgeColW))
		all += 3 + cols.colW[i]
	}
	caseMax := m.c.sw("case")
	for _, r := range q.Rows {
		caseMax = max(caseMax, m.c.sw(r.Case))
	}
	cols.caseW = min(caseMax, max(w-all, min(caseMax, minCaseW)))
	cols.from = min(m.colOff, max(len(q.Judges)-1, 0))
	used := all - 3*len(q.Judges) - sum(cols.colW) + cols.caseW
	cols.to = cols.from
	for cols.to < len(q.Judges) && used+3+cols.colW[cols.to] <= w {
		used += 3 + cols.colW[cols.to]
		cols.to++
	}
	if cols.to == cols.from && cols.to < len(q.Judges) {
		cols.to++ // one judge at least, cut to the width
	}
	return cols
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// hiddenRight reports whether judges are cut off on the right.
func (m *qualifyModel) hiddenRight() bool {
	return m.q != nil && m.columns().to < len(m.q.Judges)
}

// pendingW is the widest a pending cell of of answers gets, whichever
// spinner frame it shows: the ASCII spinner's frames differ in width, and
// the columns must not move as it turns.
func (m *qualifyModel) pendingW(of int) int {
	w := 0
	for _, f := range m.c.glyphs.spinner {
		w = max(w, m.c.sw(f))
	}
	if of > 1 {
		w += 1 + 2*len(strconv.Itoa(of)) + 1
	}
	return w
}

// pendingText is a cell still waiting for answers.
func (m *qualifyModel) pendingText(in, of int) string {
	s := m.c.glyphs.spinner[m.frame%len(m.c.glyphs.spinner)]
	if of > 1 {
		s += " " + strconv.Itoa(in) + "/" + strconv.Itoa(of)
	}
	return s
}

// gridLines are the grid's header and the cases in view.
func (m *qualifyModel) gridLines() []string {
	q := m.q
	if q == nil {
		return nil
	}
	st, g := m.c.styles, m.c.glyphs
	cols := m.columns()
	sep := st.dim.Render(g.sep)
	var sb strings.Builder
	sb.WriteString(" " + m.c.fit("case", cols.caseW) + " " + m.c.fit("expect", expectW))
	for i := cols.from; i < cols.to; i++ {
		sb.WriteString(" " + sep + " " + m.c.fit(q.Judges[i], cols.colW[i]))
	}
	lines := []string{st.title.Render(m.c.cut(sb.String(), m.c.width))}
	end := min(m.off+m.gridRows(), len(q.Rows))
	for _, r := range q.Rows[m.off:end] {
		sb.Reset()
		sb.WriteString(" " + m.c.fit(r.Case, cols.caseW) + " " + m.c.fit(strings.ToUpper(string(r.Expect)), expectW))
		for i := cols.from; i < cols.to; i++ {
			var c QualifyCell
			if i < len(r.Cells) {
				c = r.Cells[i]
			}
			text, k := m.cellText(c)
			sb.WriteString(" " + sep + " " + st.kind[k].Render(m.c.fit(text, cols.colW[i])))
		}
		lines = append(lines, sb.String())
	}
	return lines
}

// cellText is a cell's text and look: a spinner while answers are due, then
// ✓ or ✗ and the judge's verdict, or J-ERR.
func (m *qualifyModel) cellText(c QualifyCell) (string, kind) {
	right, wrong, jerr := m.qualifyMarks()
	g := m.c.glyphs
	switch {
	case c.Verdict == "" && m.q.Final && c.Answers == 0:
		return g.cancel, kindCancelled
	case c.Verdict == "" && m.q.Final:
		return g.cancel + " " + strconv.Itoa(c.Answers) + "/" + strconv.Itoa(c.Of), kindCancelled
	case c.Verdict == "":
		return m.pendingText(c.Answers, c.Of), kindRunning
	case c.Verdict == scoring.Error:
		return jerr, kindJudgeError
	case c.Correct:
		return right + " " + verdictWord(c.Verdict, g), kindPass
	}
	return wrong + " " + verdictWord(c.Verdict, g), kindFail
}

func verdictWord(v scoring.Verdict, g *glyphs) string {
	switch v {
	case scoring.Pass:
		return g.pass
	case scoring.Fail:
		return g.fail
	case scoring.Warn:
		return g.warn
	}
	return strings.ToUpper(string(v))
}

// figureLines are the judges' figures under the grid, a line per judge.
func (m *qualifyModel) figureLines() []string {
	q := m.q
	if q == nil {
		return nil
	}
	st, g := m.c.styles, m.c.glyphs
	head := []string{"judge", "model", "accuracy", "κ", "consistency", "J-ERR"}
	rows := [][]string{head}
	for _, f := range q.Figures {
		row := []string{f.Judge, f.Model, g.dash, g.dash, g.dash, g.dash}
		if f.Model == "" {
			row[1] = g.dash
		}
		if f.Verdicts > 0 {
			row[2] = rate(f.Correct, f.Verdicts, g) + " (" + strconv.Itoa(f.Correct) + "/" + strconv.Itoa(f.Verdicts) + ")"
			if f.Below {
				row[2] += " below"
			}
			row[3] = strconv.FormatFloat(f.Kappa, 'f', 2, 64)
			row[5] = rate(int(f.ErrorRate*float64(f.Verdicts)+0.5), f.Verdicts, g)
		}
		if f.ConsistencyCases > 0 {
			row[4] = strconv.FormatFloat(f.Consistency, 'f', 2, 64) + " (" + strconv.Itoa(f.ConsistencyCases) + ")"
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(head))
	for _, r := range rows {
		for i, s := range r {
			widths[i] = max(widths[i], m.c.sw(s))
		}
	}
	widths[0], widths[1] = min(widths[0], maxJudgeColW), min(widths[1], 2*maxJudgeColW)
	n := min(len(rows), m.figuresH())
	out := make([]string, 0, n)
	for ri, r := range rows[:n] {
		var sb strings.Builder
		for i, s := range r {
			sb.WriteString(" " + m.c.fit(s, widths[i]) + " ")
		}
		line := m.c.cut(strings.TrimRight(sb.String(), " "), m.c.width)
		switch {
		case ri == 0:
			line = st.title.Render(line)
		case q.Figures[ri-1].Below:
			line = st.alert.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// plural is "1 case", "3 cases".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
