package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"pitwall/runner/state"
)

// versusView is V: the cursor's cell beside the same test and model in
// another run of the battery. It first lists the other runs (Options.
// OtherRuns) to choose from, then shows both replies side by side with what
// changed (RenderVersus), scrolling as one.
type versusView struct {
	c             *common
	wholes        *wholeCells // the run in view's cell, read whole
	width, height int
	t, m          int      // the cell, in the run in view
	runs          []string // the runs to choose from, newest first
	pick          int      // the run under the cursor while choosing
	other         *state.BatteryRun
	loading       string // the run asked for, until it arrives
	off           int
	lines         int
}

// otherRunsMsg lists the other runs of the battery for V.
type otherRunsMsg struct {
	runs []string
	err  error
}

// otherRunMsg is the run V chose, read from the ledger.
type otherRunMsg struct {
	id  string
	run *state.BatteryRun
	err error
}

// SetSize gives the view its part of the screen.
func (v *versusView) SetSize(w, h int) { v.width, v.height = w, h }

// open starts V on cell (t, m) with runs to choose from.
func (v *versusView) open(t, m int, runs []string) {
	*v = versusView{c: v.c, wholes: v.wholes, width: v.width, height: v.height, t: t, m: m, runs: runs}
}

func (v *versusView) choosing() bool { return v.other == nil }

func (v *versusView) move(n int) { v.pick = min(max(v.pick+n, 0), max(len(v.runs)-1, 0)) }

func (v *versusView) scroll(n int) { v.off = min(max(v.off+n, 0), v.last()) }
func (v *versusView) page() int    { return max(v.height-1, 1) }
func (v *versusView) toTop()       { v.off = 0 }
func (v *versusView) toBottom()    { v.off = v.last() }
func (v *versusView) last() int    { return max(v.lines-v.height, 0) }

// View draws the list of runs, or the two cells side by side.
func (v *versusView) View(run *state.BatteryRun, judge string) string {
	st := v.c.styles
	if run == nil || v.t >= len(run.Tests) || v.m >= len(run.Models) {
		return ""
	}
	what := run.Tests[v.t].ID + " " + v.c.glyphs.times + " " + run.Models[v.m]
	var lines []string
	if v.choosing() {
		lines = append(lines, st.title.Render(v.c.cut(" "+what+" in which other run of "+run.Name+"?", v.width)), "")
		for i, id := range v.runs {
			mark := "  "
			if i == v.pick {
				mark = v.c.glyphs.cursor + " "
			}
			l := " " + mark + id
			if id == v.loading {
				l += st.dim.Render("  reading" + v.c.glyphs.ellipsis)
			}
			lines = append(lines, v.c.cut(l, v.width))
		}
		v.off = 0
	} else {
		out := renderVersus(run, v.other, VersusOptions{JudgeA: judge, JudgeB: v.other.Plan.InView,
			Tests: []string{run.Tests[v.t].ID}, Models: []string{run.Models[v.m]}, Width: v.width, ASCII: v.c.opts.ASCII},
			v.wholes.cells)
		lines = strings.Split(strings.TrimRight(out, "\n"), "\n")
		v.lines = len(lines)
		v.off = min(v.off, v.last())
		lines = lines[v.off:min(v.off+v.height, len(lines))]
	}
	return strings.Join(lines, "\n")
}

// openVersus asks the ledger, through its Ledger, for the runs that
// V can compare the cell (t, mi) with; the list opens when they arrive.
func (m *model) openVersus(t, mi int) tea.Cmd {
	list, run := m.c.opts.ledger().OtherRuns, m.run
	m.versus.open(t, mi, nil)
	m.wholes.retry()
	m.say("V: finding the other runs of "+run.Name+m.c.glyphs.ellipsis, false)
	return func() tea.Msg {
		runs, err := list(run)
		return otherRunsMsg{runs: runs, err: err}
	}
}

// otherRuns opens V's list, or says why there is nothing to list.
func (m *model) otherRuns(msg otherRunsMsg) {
	switch {
	case msg.err != nil:
		m.say("V: the other runs could not be read: "+msg.err.Error(), true)
	case len(msg.runs) == 0:
		m.say("V: the ledger has no other run of "+m.run.Name+" to compare with", false)
	default:
		m.say("", false)
		m.versus.open(m.versus.t, m.versus.m, msg.runs)
		m.screen = screenVersus
	}
}

// otherRun shows the run V chose beside the run in view.
func (m *model) otherRun(msg otherRunMsg) {
	if m.screen != screenVersus || msg.id != m.versus.loading {
		return // V closed, or another run was chosen since
	}
	m.versus.loading = ""
	if msg.err != nil {
		m.say("V: run "+msg.id+" could not be read: "+msg.err.Error(), true)
		return
	}
	m.versus.other, m.versus.off = msg.run, 0
}

// versusKey chooses the other run, then scrolls; esc and V close it.
func (m *model) versusKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys.Versus
	v := &m.versus
	switch {
	case key.Matches(msg, k.Back, k.Close):
		m.screen = screenGrid
	case key.Matches(msg, k.Help):
		m.openHelp()
	case v.choosing() && key.Matches(msg, k.Down):
		v.move(1)
	case v.choosing() && key.Matches(msg, k.Up):
		v.move(-1)
	case v.choosing() && key.Matches(msg, k.Choose):
		if len(v.runs) == 0 {
			return nil
		}
		id, load := v.runs[v.pick], m.c.opts.ledger().LoadRun
		v.loading = id
		return func() tea.Msg {
			run, err := load(id)
			return otherRunMsg{id: id, run: run, err: err}
		}
	case !v.choosing():
		scrollKey(msg, k.scrollKeyMap, v)
	}
	return nil
}
