package ui

import (
	"slices"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func itoa(n int) string { return strconv.Itoa(n) }

// key routes a key press: ctrl+c first, then a pending y/N, then the filter
// being typed, then the screen in front.
func (m *model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	interrupt := key.Matches(msg, k.Interrupt)
	if m.ask != askNothing {
		q := m.ask
		m.ask = askNothing
		if q == askExport {
			if f, ok := m.exportFormat(msg); ok {
				m.exporting = true
				m.say("exporting "+f+"…", false)
				return m.act.export(f)
			}
			m.say("nothing exported", false)
			if !interrupt {
				return nil
			}
		}
		// A second ctrl+c while asking to quit or interrupt means yes.
		yes := key.Matches(msg, k.Prompt.Yes) || interrupt && (q == askQuit || q == askInterrupt)
		switch {
		case yes && (q == askInterrupt || interrupt):
			return m.act.stopAndInterrupt()
		case yes && q == askQuit:
			return m.act.stopAndQuit()
		case yes && q == askRejudge:
			return m.rejudgeNow()
		case yes:
			m.stopping = true
			m.say("stopping…", false)
			return m.act.stop()
		}
		m.say("", false)
		if !interrupt {
			return nil
		}
		// ctrl+c answering another question is a ctrl+c of its own.
	}
	if interrupt {
		return m.interrupt()
	}
	if m.filtering {
		return m.filterKey(msg)
	}
	if !m.exporting && !m.stopping {
		// A message stays until the next key, unless its answer is pending.
		m.say("", false)
	}
	if m.rejudging() && m.screen == screenGrid && key.Matches(msg, k.Grid.CancelJudging) {
		// Cancelling a re-judge costs nothing: the earlier verdicts come back.
		m.say("cancelling the re-judge: the earlier verdicts come back", false)
		if m.hand.on(evCancel) {
			return m.act.stop()
		}
		return nil // sent once the re-judge is taken
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
	case screenCompare:
		return m.compareKey(msg)
	case screenSide:
		return m.sideKey(msg)
	case screenVersus:
		return m.versusKey(msg)
	}
	return m.gridKey(msg)
}

// interrupt is ctrl+c: what SIGINT does, from the keyboard. The program
// ends with tea.ErrInterrupted, which the caller turns into exit 130, as it
// does for SIGINT from outside. While the run goes it asks first, like q,
// and stops the run before it ends.
func (m *model) interrupt() tea.Cmd {
	if m.running() && m.ctrl != nil {
		m.ask = askInterrupt
		return nil
	}
	return tea.Interrupt
}

// filterKey edits the name filter; the grid follows every keystroke.
func (m *model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys.Filter
	switch {
	case key.Matches(msg, k.Keep):
		m.filtering = false
		return nil
	case key.Matches(msg, k.Drop):
		m.filtering = false
		m.typed.Reset()
	case msg.Text != "" && msg.Mod&^tea.ModShift != 0:
		return nil // alt+letter and the like type nothing
	default:
		// Its cursor blinks in no frame: the header draws the text.
		m.typed, _ = m.typed.Update(msg)
	}
	m.grid.setQuery(m.typed.Value())
	return nil
}

// helpKey scrolls the key map with the keys that move in the grid.
func (m *model) helpKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.help.key(msg) == navClose {
		m.screen = m.back
	}
	return nil
}

// scrollable is an overlay that scrolls: help, the compare view.
type scrollable interface {
	scroll(n int)
	page() int
	toTop()
	toBottom()
}

// scrollKey moves s as msg asks, if msg is one of k's.
func scrollKey(msg tea.KeyPressMsg, k scrollKeyMap, s scrollable) {
	switch {
	case key.Matches(msg, k.Down):
		s.scroll(1)
	case key.Matches(msg, k.Up):
		s.scroll(-1)
	case key.Matches(msg, k.PageDown):
		s.scroll(s.page())
	case key.Matches(msg, k.PageUp):
		s.scroll(-s.page())
	case key.Matches(msg, k.Top):
		s.toTop()
	case key.Matches(msg, k.Bottom):
		s.toBottom()
	}
}

func (m *model) pickerKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys.Picker
	switch {
	case key.Matches(msg, k.Back, k.Judge):
		m.screen = m.back
	case key.Matches(msg, k.Down):
		m.picker.move(1)
	case key.Matches(msg, k.Up):
		m.picker.move(-1)
	case key.Matches(msg, k.Choose):
		m.screen = m.back
		name := m.picker.selected()
		if name == m.judge {
			return nil
		}
		m.setJudge(name)
		if name == "" {
			// A view of what is there: the runner has nothing to do.
			m.say("no judge in view: the checks alone decide, "+m.c.glyphs.ok+" is a pass", false)
			return nil
		}
		m.sayJudging("switching to " + name + "…")
		m.handOver()
		return m.act.switchJudge(name)
	}
	return nil
}

func (m *model) detailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys.Detail
	switch {
	case key.Matches(msg, k.Back):
		m.screen = screenGrid
	case key.Matches(msg, k.Help):
		m.openHelp()
	case key.Matches(msg, k.Judge):
		m.openPicker()
	case key.Matches(msg, k.Rejudge):
		return m.rejudgeCell(m.detail.t, m.detail.m)
	case pressed(msg, k.Rejudge):
		m.say(msg.String()+": "+m.whyNoRejudge(false), false)
	case pressed(msg, k.Judge):
		m.say(msg.String()+": the run has no judge configured to choose", false)
	case key.Matches(msg, k.Top):
		m.detail.top()
	case key.Matches(msg, k.Bottom):
		m.detail.bottom()
	default:
		return m.detail.Update(msg)
	}
	return nil
}

// compareKey scrolls the ranking; esc and c close it.
func (m *model) compareKey(msg tea.KeyPressMsg) tea.Cmd {
	m.navigate(m.rank.key(msg))
	return nil
}

// sideKey scrolls the side-by-side view; esc and v close it.
func (m *model) sideKey(msg tea.KeyPressMsg) tea.Cmd {
	m.navigate(m.side.key(msg))
	return nil
}

// nav is what a component's own key asks of the root model, which alone
// changes the screen.
type nav uint8

const (
	navStay  nav = iota // the component handled it, or it was none of its keys
	navClose            // back to the grid
	navHelp             // the help, over the component
)

// navigate moves the screen as an overlay's key asked.
func (m *model) navigate(n nav) {
	switch n {
	case navClose:
		m.screen = screenGrid
	case navHelp:
		m.openHelp()
	}
}

// openRanking opens the compare view on the run in view and asks for its
// ranking; the last one stays on screen until the new one arrives.
func (m *model) openRanking() tea.Cmd {
	if m.run == nil {
		return nil
	}
	m.screen = screenCompare
	m.rank.off = 0
	return m.askRanking()
}

// rankingOpen reports whether the ranking is on screen, or under the help
// it opened.
func (m *model) rankingOpen() bool {
	return m.screen == screenCompare || m.screen == screenHelp && m.back == screenCompare
}

// askRanking asks for the run in view to be ranked, for the judge in view
// and over what the grid's filters keep. One ranking is worked out at a
// time: asked again meanwhile, it is asked once more when that one arrives.
func (m *model) askRanking() tea.Cmd {
	if m.run == nil {
		return nil
	}
	if m.rank.busy {
		m.rank.stale = true
		return nil
	}
	m.rank.busy = true
	g := m.grid
	var tests, models []int
	if len(g.tests) < len(m.run.Tests) || len(g.models) < len(m.run.Models) {
		tests, models = slices.Clone(g.tests), slices.Clone(g.models)
	}
	return rankRun(m.run, m.judge, tests, models)
}

// ranked takes a ranking that arrived, and asks for another when the run
// or the judge moved on while it was being worked out.
func (m *model) ranked(msg rankedMsg) tea.Cmd {
	stale := m.rank.stale
	m.rank.take(msg)
	if m.rankingOpen() && m.run != nil && (stale || msg.seq != m.run.Seq || msg.judge != m.judge) {
		return m.askRanking()
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
