package ui

import (
	"strconv"
	"strings"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// picker chooses the judge (or the jury) whose verdicts the grid shows, or
// none: the checks alone, where a ✓ is a pass. Its counts follow the
// snapshots while it is open.
type picker struct {
	c             *common
	width, height int
	items         []string // the run's choices, then "" for none
	cur           int
	current       string // the judge in view
	active        string // the runner's judge
	completed     int    // cells whose inference completed: what a judge judges

	// Verdicts each item's judge has given, kept row by row so that a
	// snapshot recounts only the rows that changed.
	rows   []*state.Row
	perRow []int // row*len(items) + item
	judged []int // per item
}

// SetSize gives the picker its part of the screen.
func (p *picker) SetSize(w, h int) { p.width, p.height = w, h }

// open lists run's judges and none, with the cursor on the one in view.
func (p *picker) open(run *state.BatteryRun, current string, completed int) {
	p.items = append(append(p.items[:0], run.Plan.Choices()...), "")
	p.rows, p.perRow, p.judged = nil, nil, nil
	p.cur = 0
	for i, n := range p.items {
		if n == current {
			p.cur = i
			break
		}
	}
	p.follow(run, current, completed)
}

// follow brings the counts up to run, recounting the rows whose pointer
// changed, and keeps the cursor on its item.
func (p *picker) follow(run *state.BatteryRun, current string, completed int) {
	p.current, p.active, p.completed = current, run.Plan.InView, completed
	n := len(p.items)
	if len(p.rows) != len(run.Rows) {
		p.rows = make([]*state.Row, len(run.Rows))
		p.perRow = make([]int, len(run.Rows)*n)
		p.judged = make([]int, n)
	}
	for t, row := range run.Rows {
		if row == p.rows[t] {
			continue
		}
		counts := p.perRow[t*n : (t+1)*n]
		for i := range counts {
			p.judged[i] -= counts[i]
			counts[i] = 0
		}
		if row != nil {
			for c := range row.Cells {
				for i, name := range p.items[:n-1] {
					if j := row.Cells[c].Judgment(name); j != nil && j.Status == state.JudgmentDone {
						counts[i]++
					}
				}
			}
		}
		for i := range counts {
			p.judged[i] += counts[i]
		}
		p.rows[t] = row
	}
}

func (p *picker) move(n int) {
	if len(p.items) > 0 {
		p.cur = (p.cur + n + len(p.items)) % len(p.items)
	}
}

// selected is the judge under the cursor; "" is none.
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
		name := n
		switch {
		case n == "":
			name = "none"
			notes = append(notes, "checks only: "+p.c.glyphs.ok+" is a pass, no judge calls")
		default:
			notes = append(notes, strconv.Itoa(p.judged[i])+"/"+strconv.Itoa(p.completed)+" judged")
		}
		if n == scoring.JuryName {
			notes = append(notes, "aggregate of the judges")
		}
		if n == p.current {
			notes = append(notes, "in view")
		}
		if n == p.active && n != p.current && n != "" {
			notes = append(notes, "the run's judge")
		}
		mark := "  "
		if i == p.cur {
			mark = p.c.glyphs.cursor + " "
		}
		line := " " + mark + p.c.fit(name, nameW) + "  " + strings.Join(notes, " · ")
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
