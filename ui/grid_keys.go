package ui

import (
	"pitwall/runner/state"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func (m *model) gridKey(msg tea.KeyPressMsg) tea.Cmd {
	k, g := m.c.keys.Grid, m.grid
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
			m.screen = screenDetail
			return m.detail.open(m.run, t, mm, m.judge)
		}
	case key.Matches(msg, k.Help):
		m.openHelp()
	case key.Matches(msg, k.Figures):
		g.fig = (g.fig + 1) % numFigures
	case key.Matches(msg, k.Transpose):
		g.transpose()
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.typed.SetValue(g.query)
		m.typed.CursorEnd()
	case key.Matches(msg, k.ClearFilter):
		if g.query != "" {
			m.typed.Reset()
			g.setQuery("")
		}
	case key.Matches(msg, k.StatusFilter):
		g.cycleStatus()
	case key.Matches(msg, k.Compare):
		return m.openRanking()
	case key.Matches(msg, k.SideBySide):
		if t, _, ok := g.cursorCell(); ok {
			m.side.open(t, slices.Clone(g.models))
			m.wholes.retry()
			m.screen = screenSide
		}
	case key.Matches(msg, k.Versus):
		if t, mm, ok := g.cursorCell(); ok {
			return m.openVersus(t, mm)
		}
	case key.Matches(msg, k.Stop):
		m.ask = askStop
	case key.Matches(msg, k.Rejudge):
		if t, mm, ok := g.cursorCell(); ok {
			return m.rejudgeCell(t, mm)
		}
	case key.Matches(msg, k.RejudgeAll):
		var refs []state.CellRef
		for t := range m.run.Tests {
			for mi := range m.run.Models {
				refs = append(refs, completedRefs(m.run, t, mi)...)
			}
		}
		return m.askRejudge(refs, true)
	case key.Matches(msg, k.Judge):
		m.openPicker()
	case key.Matches(msg, k.Export):
		m.ask = askExport
	default:
		m.cannot(msg)
	}
	return nil
}

// pressed reports whether msg is one of b's keys, enabled or not.
func pressed(msg tea.KeyPressMsg, b key.Binding) bool {
	return slices.Contains(b.Keys(), msg.String())
}

// cannot says in the status line why the key msg did nothing: a key that
// cannot act now names what stops it, any other key points to ?. Every key
// answers.
func (m *model) cannot(msg tea.KeyPressMsg) {
	if why := m.whyNot(msg); why != "" {
		m.say(msg.String()+": "+why, false)
	}
}

// whyNot is why the grid's key msg cannot act now, or "" when it is no
// key that should have acted.
func (m *model) whyNot(msg tea.KeyPressMsg) string {
	k := m.c.keys.Grid
	have := m.run != nil
	switch {
	case !have:
		return "waiting for the run's first snapshot"
	case pressed(msg, k.Stop):
		switch {
		case m.ctrl == nil:
			return "this run is only shown here; there is nothing to stop"
		case m.stopping:
			return "already stopping"
		}
		return "the run has ended; nothing to stop"
	case pressed(msg, k.Rejudge), pressed(msg, k.RejudgeAll):
		return m.whyNoRejudge(pressed(msg, k.RejudgeAll))
	case pressed(msg, k.Judge):
		if m.ctrl == nil {
			return "this run is only shown here; pitwall show RUN --judge NAME picks a judge"
		}
		return "the run has no judge configured to choose"
	case pressed(msg, k.Export):
		if m.exporting {
			return "an export is under way"
		}
		return "this run is only shown here; pitwall export RUN writes it"
	case pressed(msg, k.Versus) && !m.c.opts.hasLedger():
		return "no ledger at hand to find other runs in; pitwall show RUN --vs OTHER compares two runs"
	case pressed(msg, k.Detail), pressed(msg, k.SideBySide), pressed(msg, k.Versus):
		return "no cell under the cursor (the filters keep none)"
	case pressed(msg, k.ClearFilter):
		return "no / filter to clear"
	}
	for _, grp := range k.FullHelp() {
		for _, b := range grp {
			if pressed(msg, b) {
				return ""
			}
		}
	}
	if msg.Text == "" && msg.Mod&tea.ModCtrl == 0 {
		return "" // shift, a function key: nothing was typed
	}
	return "not a key of the grid; ? lists them"
}

// whyNoRejudge is why r (or R, all) cannot re-judge now.
func (m *model) whyNoRejudge(all bool) string {
	switch {
	case m.ctrl == nil:
		return "this run is only shown here; pitwall rejudge RUN judges it again"
	case len(m.run.Plan.Choices()) == 0:
		return "the run has no judge configured; its checks alone decide"
	case m.judge == "":
		return "no judge in view (checks only); J picks one"
	case all:
		return "no cell's inference has completed yet"
	}
	t, mi, ok := m.grid.cursorCell()
	if m.screen == screenDetail {
		t, mi, ok = m.detail.t, m.detail.m, true
	}
	if !ok {
		return "no cell under the cursor"
	}
	for _, c := range repeats(m.run, t, mi) {
		switch c.Status {
		case state.Failed:
			return "this cell failed its checks (" + m.c.glyphs.failed + "); a judge is not asked about it"
		case state.Errored:
			return "this cell's inference errored (" + m.c.glyphs.errored + "); pitwall retry RUN runs it again"
		case state.Cancelled:
			return "this cell was cancelled; pitwall resume RUN runs it"
		}
	}
	return "this cell's inference has not completed yet"
}

// exportQuestion asks which format e writes, each with its key.
func (m *model) exportQuestion() string {
	var parts []string
	for _, f := range m.c.keys.Prompt.Export.formats() {
		parts = append(parts, f.Help().Key+" "+f.Help().Desc)
	}
	return "Export the run as? " + strings.Join(parts, " · ") + " (enter json; any other key: none)"
}

// exportFormat is the format msg picks in answer to exportQuestion.
func (m *model) exportFormat(msg tea.KeyPressMsg) (string, bool) {
	for _, f := range m.c.keys.Prompt.Export.formats() {
		if key.Matches(msg, f) {
			return f.Help().Desc, true
		}
	}
	return "", false
}
