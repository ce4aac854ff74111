package ui

import (
	"strconv"
	"strings"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// picker chooses the judge (or the jury) whose verdicts the grid shows.
type picker struct {
	c             *common
	width, height int
	items         []string
	judged        []int // cells each judge has judged, when it opened
	toJudge       int
	cur           int
	current       string // the judge in view
	active        string // the runner's judge
}

// SetSize gives the picker its part of the screen.
func (p *picker) SetSize(w, h int) { p.width, p.height = w, h }

// open lists run's judges with the cursor on the one in view. It counts each
// judge's verdicts once, here, rather than on every frame.
func (p *picker) open(run *state.BatteryRun, current string, toJudge int) {
	p.items = append(p.items[:0], run.Plan.Choices()...)
	p.judged = make([]int, len(p.items))
	p.toJudge = toJudge
	p.current, p.active = current, run.Plan.InView
	p.cur = 0
	idx := map[string]int{}
	for i, n := range p.items {
		idx[n] = i
		if n == current {
			p.cur = i
		}
	}
	for _, row := range run.Rows {
		if row == nil {
			continue
		}
		for c := range row.Cells {
			for n, j := range row.Cells[c].Judgments {
				if i, ok := idx[n]; ok && j != nil && j.Status == state.JudgmentDone {
					p.judged[i]++
				}
			}
		}
	}
}

func (p *picker) move(n int) {
	if len(p.items) > 0 {
		p.cur = (p.cur + n + len(p.items)) % len(p.items)
	}
}

func (p *picker) selected() string {
	if p.cur < len(p.items) {
		return p.items[p.cur]
	}
	return ""
}

// View draws the list in exactly height lines.
func (p *picker) View() string {
	st := p.c.styles
	lines := []string{
		st.title.Render(" Judge in view") + st.dim.Render(" — the grid shows its verdicts; it judges what it has not judged yet"),
		"",
	}
	nameW := 8
	for _, n := range p.items {
		nameW = max(nameW, p.c.sw(n))
	}
	for i, n := range p.items {
		var notes []string
		notes = append(notes, strconv.Itoa(p.judged[i])+"/"+strconv.Itoa(p.toJudge)+" judged")
		if n == scoring.JuryName {
			notes = append(notes, "aggregate of the judges")
		}
		if n == p.current {
			notes = append(notes, "in view")
		}
		if n == p.active && n != p.current {
			notes = append(notes, "the run's judge")
		}
		mark := "  "
		if i == p.cur {
			mark = p.c.glyphs.cursor + " "
		}
		line := " " + mark + p.c.fit(n, nameW) + "  " + strings.Join(notes, " · ")
		if i == p.cur {
			line = st.selected.Render(p.c.fit(line, min(p.width, p.c.sw(line)+1)))
		}
		lines = append(lines, line)
	}
	lines = append(lines, "", st.dim.Render(" ↑/↓ choose · enter switches · esc cancels"))
	for i, l := range lines {
		lines[i] = p.c.cut(l, p.width)
	}
	for len(lines) < p.height {
		lines = append(lines, "")
	}
	return strings.Join(lines[:max(p.height, 0)], "\n")
}
