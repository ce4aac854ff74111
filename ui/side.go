package ui

import (
	"strconv"
	"strings"

	"pitwall/runner/state"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// side is the side-by-side view (v): one test's replies from every model
// the grid keeps, in columns, each with its verdict under the judge in
// view, its checks (passed ones too), its timing and its reply. ←/→ move
// along the models when they do not all fit; the rest scrolls as one. A
// finished cell's reply and checks are read whole for the columns on
// screen (whole_cells.go).
type side struct {
	c             *common
	wholes        *wholeCells
	width, height int
	t             int   // the test
	models        []int // the models, in the grid's order
	col           int   // the first model shown
	off           int   // the first line shown
	lines         int   // lines at the last draw, for scrolling
}

// minSideCol is the narrowest column a reply is readable in.
const minSideCol = 32

// SetSize gives the view its part of the screen.
func (s *side) SetSize(w, h int) { s.width, s.height = w, h }

// open shows test t's replies from models, from the top.
func (s *side) open(t int, models []int) {
	s.t, s.models, s.col, s.off = t, models, 0, 0
}

// shownCols is how many models fit side by side.
func (s *side) shownCols() int {
	return max(min(len(s.models)-s.col, (s.width-1)/(minSideCol+3)), 1)
}

// shown are the grid cells of the columns on screen.
func (s *side) shown() []cellPos {
	if s.col >= len(s.models) {
		return nil
	}
	at := make([]cellPos, 0, s.shownCols())
	for _, m := range s.models[s.col : s.col+s.shownCols()] {
		at = append(at, cellPos{s.t, m})
	}
	return at
}

// left and right move along the models, a column at a time.
func (s *side) left()  { s.col = max(s.col-1, 0) }
func (s *side) right() { s.col = min(s.col+1, max(len(s.models)-s.shownCols(), 0)) }

func (s *side) scroll(n int) { s.off = min(max(s.off+n, 0), s.last()) }
func (s *side) page() int    { return max(s.height-2, 1) }
func (s *side) toTop()       { s.off = 0 }
func (s *side) toBottom()    { s.off = s.last() }
func (s *side) last() int    { return max(s.lines-(s.height-1), 0) }

// View draws a title line and the columns from the scroll offset.
func (s *side) View(run *state.BatteryRun, judge string) string {
	st, g := s.c.styles, s.c.glyphs
	if run == nil || s.t >= len(run.Tests) {
		return ""
	}
	n := s.shownCols()
	colW := (s.width - 1 - 3*(n-1)) / n
	cols := make([][]string, n)
	for i := range n {
		cols[i] = s.column(run, s.t, s.models[s.col+i], judge, colW)
	}
	height := 0
	for _, c := range cols {
		height = max(height, len(c))
	}
	s.lines = height
	s.off = min(s.off, s.last())
	sep := st.dim.Render(" " + g.sep + " ")
	body := make([]string, 0, s.height-1)
	for l := s.off; l < height && len(body) < s.height-1; l++ {
		var sb strings.Builder
		sb.WriteString(" ")
		for i, c := range cols {
			if i > 0 {
				sb.WriteString(sep)
			}
			cell := ""
			if l < len(c) {
				cell = c[l]
			}
			sb.WriteString(s.c.fit(cell, colW))
		}
		body = append(body, strings.TrimRight(sb.String(), " "))
	}
	title := " " + run.Tests[s.t].ID + " " + g.times + " " + plural(len(s.models), "model")
	var right []string
	if n < len(s.models) {
		right = append(right, "models "+strconv.Itoa(s.col+1)+"–"+strconv.Itoa(s.col+n)+"/"+strconv.Itoa(len(s.models))+" (←/→)")
	}
	if height > s.height-1 {
		pct := 100
		if s.last() > 0 {
			pct = s.off * 100 / s.last()
		}
		right = append(right, "scroll "+strconv.Itoa(pct)+"%")
	}
	right = append(right, "esc back ")
	r := strings.Join(right, " · ")
	line := st.title.Render(title)
	if lw, rw := s.c.sw(title), s.c.sw(r); lw+rw+1 <= s.width {
		line += strings.Repeat(" ", s.width-lw-rw) + st.dim.Render(r)
	} else {
		line = st.title.Render(s.c.cut(title, s.width))
	}
	return line + "\n" + strings.Join(body, "\n")
}

// column is model mi's reply to test t, as lines of width w.
func (s *side) column(run *state.BatteryRun, t, mi int, judge string, w int) []string {
	cells, note := s.wholes.cells(run, t, mi)
	return replyColumn(s.c, run.Models[mi], cells, note, judge, w)
}

// replyColumn is a cell's repeats under a title, as lines of width w: the
// verdict under judge, the timing, the checks and the reply, and note
// under a repeat that keeps less than the ledger has.
func replyColumn(c *common, title string, cells []*state.Cell, note, judge string, w int) []string {
	st, g := c.styles, c.glyphs
	var out []string
	add := func(indent int, text string) {
		for _, l := range strings.Split(c.wm.Wrap(strings.ReplaceAll(text, "\t", "    "), max(w-indent, 8), ""), "\n") {
			out = append(out, strings.Repeat(" ", indent)+l)
		}
	}
	out = append(out, st.title.Render(c.cut(title, w)))
	for r, cell := range cells {
		if len(cells) > 1 {
			out = append(out, st.section.Render("repeat "+strconv.Itoa(r+1)+" of "+strconv.Itoa(len(cells))))
		}
		out = append(out, cellVerdict(c, cell, judge))
		if cell.Latency > 0 || cell.TTFT > 0 {
			out = append(out, st.dim.Render("latency "+shortDur(cell.Latency)+" · TTFT "+shortDur(cell.TTFT)))
		}
		said := cell.Said()
		for _, ch := range said.Checks {
			mark := st.kind[kindOK].Render(g.ok)
			if !ch.Pass {
				mark = st.kind[kindFailed].Render(g.failed)
			}
			out = append(out, mark+" "+c.cut(ch.Name, w-3))
			if !ch.Pass && ch.Reason != "" {
				add(3, ch.Reason)
			}
		}
		if said.Error != "" {
			add(0, st.kind[kindErrored].Render(g.errored)+" "+said.Error)
		}
		if said.Output != "" || len(said.ToolCalls) > 0 {
			out = append(out, "")
			if said.Output != "" {
				add(0, said.Output)
			}
			for _, tc := range said.ToolCalls {
				add(0, "→ "+tc.Name+"("+tc.Arguments+")")
			}
		}
		if cell.Clipped && note != "" {
			add(0, st.dim.Render(note))
		}
		out = append(out, "")
	}
	return out
}

// cellVerdict is a cell's outcome under judge: the verdict and score once
// judged, else what its inference came to.
func cellVerdict(c *common, cell *state.Cell, judge string) string {
	st, g := c.styles, c.glyphs
	k := repeatKind(cell, judge)
	word := string(cell.Status)
	if j := cell.Judgment(judge); j != nil && j.Status == state.JudgmentDone {
		// The glyph is the verdict's word: PASS 0.82.
		return st.kind[k].Render(g.glyph(k, 0) + scoreText(k, j.Score))
	}
	return st.kind[k].Render(g.glyph(k, 0) + " " + word)
}

// key answers the side's own keys.
func (s *side) key(msg tea.KeyPressMsg) nav {
	k := s.c.keys.Side
	switch {
	case key.Matches(msg, k.Back, k.Close):
		return navClose
	case key.Matches(msg, k.Help):
		return navHelp
	case key.Matches(msg, k.Left):
		s.left()
	case key.Matches(msg, k.Right):
		s.right()
	default:
		scrollKey(msg, k.scrollKeyMap, s)
	}
	return navStay
}
