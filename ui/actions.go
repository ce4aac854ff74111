package ui

import (
	"pitwall/runner/state"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func itoa(n int) string { return strconv.Itoa(n) }

// key routes a key press: a pending y/N first, then the filter being typed,
// then the screen in front.
func (m *model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	if m.ask != askNothing {
		q := m.ask
		m.ask = askNothing
		// A second ctrl+c while asking to quit means it.
		yes := key.Matches(msg, k.Yes) || q == askQuit && msg.String() == "ctrl+c"
		if !yes {
			m.say("", false)
			return nil
		}
		if q == askQuit {
			return m.act.stopAndQuit()
		}
		m.stopping = true
		m.say("stopping…", false)
		return m.act.stop()
	}
	if m.filtering {
		return m.filterKey(msg)
	}
	if !m.exporting && !m.stopping {
		// A message stays until the next key, unless its answer is pending.
		m.say("", false)
	}
	if key.Matches(msg, k.Quit) {
		if m.running() && m.ctrl != nil {
			m.ask = askQuit
			return nil
		}
		return tea.Quit
	}
	switch m.screen {
	case screenHelp:
		return m.helpKey(msg)
	case screenPicker:
		return m.pickerKey(msg)
	case screenDetail:
		return m.detailKey(msg)
	}
	return m.gridKey(msg)
}

// filterKey edits the name filter; the grid follows every keystroke.
func (m *model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		m.filtering = false
		return nil
	case "esc":
		m.filtering = false
		m.typed = ""
	case "backspace":
		if r := []rune(m.typed); len(r) > 0 {
			m.typed = string(r[:len(r)-1])
		}
	case "ctrl+u":
		m.typed = ""
	default:
		if msg.Text == "" || msg.Mod&^tea.ModShift != 0 {
			return nil
		}
		m.typed += msg.Text
	}
	m.grid.setQuery(m.typed)
	return nil
}

func (m *model) helpKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Help, k.Back):
		m.screen = m.back
	case msg.String() == "down" || msg.String() == "j":
		m.help.scroll(1)
	case msg.String() == "up" || msg.String() == "k":
		m.help.scroll(-1)
	case msg.String() == "pgdown":
		m.help.scroll(m.help.height)
	case msg.String() == "pgup":
		m.help.scroll(-m.help.height)
	}
	return nil
}

func (m *model) pickerKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Back, k.Judge):
		m.screen = m.back
	case msg.String() == "down" || msg.String() == "j":
		m.picker.move(1)
	case msg.String() == "up" || msg.String() == "k":
		m.picker.move(-1)
	case msg.String() == "enter":
		m.screen = m.back
		name := m.picker.selected()
		if name == "" || name == m.judge {
			return nil
		}
		m.setJudge(name)
		m.sayJudging("switching to " + name + "…")
		return m.act.switchJudge(name)
	}
	return nil
}

func (m *model) detailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Back):
		m.screen = screenGrid
	case key.Matches(msg, k.Help):
		m.openHelp()
	case key.Matches(msg, k.Judge):
		m.openPicker()
	case key.Matches(msg, k.Rejudge):
		return m.rejudgeCell(m.detail.t, m.detail.m)
	case key.Matches(msg, k.Top):
		m.detail.top()
	case key.Matches(msg, k.Bottom):
		m.detail.bottom()
	default:
		return m.detail.Update(msg)
	}
	return nil
}

func (m *model) gridKey(msg tea.KeyPressMsg) tea.Cmd {
	k, g := m.c.keys, m.grid
	switch {
	case key.Matches(msg, k.Up):
		g.move(-1, 0)
	case key.Matches(msg, k.Down):
		g.move(1, 0)
	case key.Matches(msg, k.Left):
		g.move(0, -1)
	case key.Matches(msg, k.Right):
		g.move(0, 1)
	case key.Matches(msg, k.Top):
		g.home()
	case key.Matches(msg, k.Bottom):
		g.end()
	case key.Matches(msg, k.PageUp):
		g.pageUp()
	case key.Matches(msg, k.PageDown):
		g.pageDown()
	case key.Matches(msg, k.Detail):
		if t, mm, ok := g.cursorCell(); ok {
			m.detail.open(m.run, t, mm, m.judge)
			m.screen = screenDetail
		}
	case key.Matches(msg, k.Help):
		m.openHelp()
	case key.Matches(msg, k.Figures):
		g.fig = (g.fig + 1) % numFigures
	case key.Matches(msg, k.Transpose):
		g.transpose()
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.typed = g.query
	case key.Matches(msg, k.ClearFilter):
		if g.query != "" {
			m.typed = ""
			g.setQuery("")
		}
	case key.Matches(msg, k.StatusFilter):
		g.cycleStatus()
	case key.Matches(msg, k.Stop):
		m.ask = askStop
	case key.Matches(msg, k.Rejudge):
		if t, mm, ok := g.cursorCell(); ok {
			return m.rejudgeCell(t, mm)
		}
	case key.Matches(msg, k.RejudgeAll):
		m.sayJudging("re-judging the run with " + m.judge + "…")
		return m.act.rejudgeAll(m.judge)
	case key.Matches(msg, k.Judge):
		m.openPicker()
	case key.Matches(msg, k.Export):
		m.exporting = true
		m.say("exporting…", false)
		return m.act.export()
	}
	return nil
}

func (m *model) openHelp() {
	if m.screen != screenHelp {
		m.back = m.screen
	}
	m.help.off = 0
	m.screen = screenHelp
}

func (m *model) openPicker() {
	if m.run == nil {
		return
	}
	m.back = m.screen
	// Completed, not ToJudge: with no judge in view nothing is to judge.
	m.picker.open(m.run, m.judge, m.board.counts.Completed)
	m.screen = screenPicker
}

// rejudgeCell asks for the completed repeats of (t, m) to be judged again by
// the judge in view; inference is not repeated.
func (m *model) rejudgeCell(t, mi int) tea.Cmd {
	refs := completedRefs(m.run, t, mi)
	if len(refs) == 0 {
		m.say("nothing to re-judge: this cell's inference did not complete", true)
		return nil
	}
	m.sayJudging("re-judging " + refs[0].Model + " " + m.c.glyphs.times + " " + refs[0].Test + " with " + m.judge + "…")
	return m.act.rejudge(refs, m.judge)
}

func completedRefs(run *state.BatteryRun, t, mi int) []state.CellRef {
	if run == nil || t >= len(run.Tests) || mi >= len(run.Models) {
		return nil
	}
	var refs []state.CellRef
	for r, c := range repeats(run, t, mi) {
		if c.Status == state.Completed {
			refs = append(refs, state.CellRef{Test: run.Tests[t].ID, Model: run.Models[mi], Repeat: r})
		}
	}
	return refs
}

// refreshKeys enables the keys that can act now; help greys the others.
func (m *model) refreshKeys() {
	k := m.c.keys
	have := m.run != nil
	ctrl := m.ctrl != nil
	judges := have && len(m.run.Plan.Choices()) > 0 && ctrl
	// With no judge in view (checks only) there is nothing to re-judge with.
	judging := judges && m.judge != ""
	cellT, cellM, onCell := m.grid.cursorCell()
	if m.screen == screenDetail {
		cellT, cellM, onCell = m.detail.t, m.detail.m, have
	}
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.Left, &k.Right, &k.Top, &k.Bottom, &k.PageUp, &k.PageDown,
		&k.Figures, &k.Transpose, &k.Filter, &k.StatusFilter} {
		b.SetEnabled(have)
	}
	k.Detail.SetEnabled(onCell)
	k.Stop.SetEnabled(ctrl && m.running() && !m.stopping)
	k.ClearFilter.SetEnabled(have && m.screen == screenGrid && m.grid.query != "")
	k.Rejudge.SetEnabled(judging && onCell && len(completedRefs(m.run, cellT, cellM)) > 0)
	k.RejudgeAll.SetEnabled(judging && m.board.counts.Completed > 0)
	k.Judge.SetEnabled(judges && (len(m.run.Plan.Choices()) > 1 || m.run.Plan.Choices()[0] != m.judge))
	k.Export.SetEnabled(have && ctrl && !m.exporting)
}
