package ui

import (
	"charm.land/bubbles/v2/textinput"
	"pitwall/runner/state"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// screen is what fills the space between the header and the footer.
type screen uint8

const (
	screenGrid screen = iota
	screenDetail
	screenHelp
	screenPicker
	screenCompare
	screenSide
	screenVersus
)

// question is a y/N the status line is asking.
type question uint8

const (
	askNothing question = iota
	askStop
	askQuit
	askInterrupt // ctrl+c while the run goes: stop it and exit 130
	askRejudge   // m.asking holds the cells and the judge
	askExport    // which format e writes
)

const (
	headerH = 3
	footerH = 1
)

// model is the root of the program: it owns the screen, applies snapshots,
// routes keys and asks the controller for actions through commands.
type model struct {
	c     *common
	ctrl  Controller
	act   actions
	snaps <-chan *state.BatteryRun
	done  <-chan struct{}

	run    *state.BatteryRun
	closed bool // the snapshot channel closed
	board  board

	grid   *grid
	header header
	fleet  fleet
	detail *detail
	help   help
	picker picker
	rank   ranking
	side   side
	versus versusView
	wholes wholeCells // cells side and versus read whole

	screen    screen
	back      screen // where help and the picker return to
	ask       question
	asking    asking // what a pending askRejudge is about
	filtering bool
	typed     textinput.Model // the filter being typed; the header draws it

	judge       string // the judge in view
	judgeChosen bool   // the user chose it (none included); snapshots no longer move it
	message     string // the UI's own status: export path, errors, what was asked
	alert       bool   // message is an error
	// message is about judge work: it goes once a snapshot shows the work
	// in flight (judgeSeen) and then none, or it would outlive the work.
	judgeNote bool
	judgeSeen bool
	// hand is judge work asked for after the run's end that no snapshot
	// shows yet (handover.go); handedAt is the snapshot that will show it.
	hand     handover
	handedAt uint64
	asked    int // re-judge questions asked, to match their estimates
	// headerLines is the header's height at the last layout: headerH, and
	// more while a question wraps.
	headerLines int
	stopping    bool
	exporting   bool
	ticking     bool
}

func newModel(snaps <-chan *state.BatteryRun, ctrl Controller, opts Options, done <-chan struct{}) *model {
	c := newCommon(opts)
	m := &model{c: c, ctrl: ctrl, act: newActions(ctrl, opts), snaps: snaps, done: done, typed: newFilterInput()}
	m.grid = newGrid(c, &m.board)
	m.header = header{c: c}
	m.fleet = fleet{c: c}
	m.detail = newDetail(c)
	m.help = help{c: c}
	m.picker = picker{c: c}
	m.rank = ranking{c: c}
	m.wholes = wholeCells{c: c}
	m.side = side{c: c, wholes: &m.wholes}
	m.versus = versusView{c: c, wholes: &m.wholes}
	m.refreshKeys()
	m.headerLines = headerH
	return m
}

// Init starts reading snapshots.
func (m *model) Init() tea.Cmd {
	return readSnapshot(m.snaps, m.done)
}

// unicodeCore reports whether msg is the terminal's answer that it knows
// mode 2027: bubbletea's renderer then measures by grapheme clusters, and
// the screen must pad cells the same way (common.wm).
func unicodeCore(msg tea.ModeReportMsg) bool {
	return msg.Mode == ansi.ModeUnicodeCore &&
		(msg.Value == ansi.ModeSet || msg.Value == ansi.ModeReset || msg.Value == ansi.ModePermanentlySet)
}

// live reports whether work is under way that the screen should animate.
func (m *model) live() bool {
	return m.run == nil || !m.run.Final || m.run.JudgeInFlight > 0
}

// running reports whether the run's phases are still going (stop and quit ask).
func (m *model) running() bool { return m.run != nil && !m.run.Final }

// Update applies a message. It does no I/O: actions go out as commands.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		m.layout()
	case tea.ModeReportMsg:
		if unicodeCore(msg) && m.c.wm != ansi.GraphemeWidth {
			m.c.wm = ansi.GraphemeWidth
			m.grid.remeasure()
			m.layout()
		}
	case snapshotMsg:
		m.apply(msg.run)
		var cmds []tea.Cmd
		if msg.closed {
			m.closed = true
		} else {
			cmds = append(cmds, readSnapshot(m.snaps, m.done))
		}
		if m.rankingOpen() {
			cmds = append(cmds, m.askRanking())
		}
		if m.live() && !m.ticking {
			m.ticking = true
			cmds = append(cmds, tick())
		}
		cmd = tea.Batch(cmds...)
	case snapshotsClosedMsg:
		m.closed = true
	case tickMsg:
		m.grid.frame++
		if m.live() {
			cmd = tick()
		} else {
			m.ticking = false
		}
	case stopSentMsg:
		if m.running() {
			m.say("stopping: in-flight work is being cancelled", false)
		}
	case rejudgeSentMsg:
		what := "the whole run"
		if msg.cells > 0 {
			what = "the cell"
		}
		m.sayJudging("re-judging " + what + " with " + msg.judge + " (s cancels)")
		cmd = m.handed(msg.seq)
	case judgeSwitchedMsg:
		m.sayJudging("judge in view: " + msg.judge + "; it judges what it has not judged yet")
		cmd = m.handed(msg.seq)
	case estimatedMsg:
		m.estimated(msg)
	case rankedMsg:
		cmd = m.ranked(msg)
	case otherRunsMsg:
		m.otherRuns(msg)
	case otherRunMsg:
		m.otherRun(msg)
	case wholeMsg:
		m.detail.takeWhole(msg, m.run, m.judge)
	case cellWholeMsg:
		m.wholes.take(msg)
	case exportedMsg:
		m.exporting = false
		if msg.err != nil {
			m.say("export failed: "+msg.err.Error(), true)
		} else {
			m.say("exported to "+msg.path, false)
		}
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	case tea.PasteMsg:
		if m.filtering {
			m.typed, _ = m.typed.Update(msg)
			m.grid.setQuery(m.typed.Value())
		}
	}
	m.refreshKeys()
	if m.headerHeight() != m.headerLines {
		m.layout() // a question came or went, or its cost arrived
	}
	return m, tea.Batch(cmd, m.readShown())
}

func (m *model) say(s string, alert bool) {
	m.message, m.alert = s, alert
	m.judgeNote, m.judgeSeen = false, false
}

// handOver notes judge work asked for after the run's end, until the
// controller has taken it and a snapshot shows it.
func (m *model) handOver() {
	if m.run != nil && m.run.Final {
		m.hand.on(evAsk)
		m.handedAt = 0
	}
}

// handed is the controller's word that it took the judge work, shown by
// snapshot seq; a stop asked for meanwhile goes now.
func (m *model) handed(seq uint64) tea.Cmd {
	m.handedAt = seq
	e := evTaken
	if seq == 0 || m.run != nil && m.run.Seq >= seq {
		e = evTakenShown
	}
	if m.hand.on(e) {
		return m.act.stop()
	}
	return nil
}

// sayJudging says s until the judge work it announces is over.
func (m *model) sayJudging(s string) {
	m.say(s, false)
	m.judgeNote = true
}

// apply takes a snapshot: the board re-tallies the rows that changed and the
// components follow.
func (m *model) apply(run *state.BatteryRun) {
	if run == nil {
		return
	}
	m.run = run
	if m.handedAt > 0 && run.Seq >= m.handedAt {
		m.hand.on(evShown)
	}
	if m.judgeNote {
		if run.JudgeInFlight > 0 {
			m.judgeSeen = true
		} else if m.judgeSeen {
			m.say("", false)
		}
	}
	if !m.judgeChosen {
		m.judge = defaultJudge(run)
	}
	judgeChanged := m.grid.judge != m.judge
	changed, all := m.board.apply(run, m.judge)
	m.grid.judge = m.judge
	m.grid.setRun(run, changed, all || judgeChanged)
	m.header.observe(run, m.board.counts)
	if m.run.Final && m.stopping {
		m.stopping = false
		m.say("", false) // the header's summary says it now
	}
	m.layout()
	switch m.screen {
	case screenDetail:
		m.detail.refresh(run, m.judge)
	case screenPicker:
		m.picker.follow(run, m.judge, m.board.counts.Completed)
	}
}

// defaultJudge is the judge a run opens with: the runner's. A run scored by
// its checks alone (--judge none) has none, though Judges may still list the
// configured ones: its ✓ are passes, and J picks a judge when one is wanted.
func defaultJudge(run *state.BatteryRun) string {
	return run.Plan.InView
}

// setJudge puts judge in view and re-tallies for it.
func (m *model) setJudge(judge string) {
	m.judge, m.judgeChosen = judge, true
	if m.run == nil {
		return
	}
	m.board.apply(m.run, judge)
	m.grid.setJudge(judge)
	if m.screen == screenDetail {
		m.detail.refresh(m.run, judge)
	}
}

// layout shares the screen out: header, body (grid over fleet, or another
// screen), footer.
func (m *model) layout() {
	w, h := m.c.width, m.c.height
	m.header.SetSize(w)
	m.headerLines = m.headerHeight()
	bodyH := max(h-m.headerLines-footerH, 1)
	fleetH := 0
	if m.run != nil && len(m.run.Fleet) > 0 {
		fleetH = m.fleet.lines(m.run.Fleet, max((bodyH-6)/3, 1))
	}
	m.fleet.SetSize(w, fleetH)
	m.fleet.idle = m.run != nil && !m.live()
	m.grid.SetSize(w, bodyH-fleetH)
	m.detail.SetSize(w, bodyH)
	m.help.SetSize(w, bodyH)
	m.picker.SetSize(w, bodyH)
	m.rank.SetSize(w, bodyH)
	m.side.SetSize(w, bodyH)
	m.versus.SetSize(w, bodyH)
}

// View draws the screen.
func (m *model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

func (m *model) render() string {
	s := m.frame()
	if m.c.opts.ASCII {
		s = asciiFold.Replace(s)
	}
	return s
}

func (m *model) frame() string {
	w, h := m.c.width, m.c.height
	if w == 0 || h == 0 {
		return ""
	}
	if s, ok := m.c.tooSmall(); ok {
		return s
	}
	var body string
	switch m.screen {
	case screenDetail:
		body = m.detail.View(m.run)
	case screenHelp:
		body = m.help.View()
	case screenPicker:
		body = m.picker.View()
	case screenCompare:
		body = m.rank.View()
	case screenSide:
		body = m.side.View(m.run, m.judge)
	case screenVersus:
		body = m.versus.View(m.run, m.judge)
	default:
		// The fleet sits right under the grid: a run's rows do not change,
		// so it does not move while the run goes on.
		body = m.grid.View()
		if m.fleet.height > 0 {
			body += "\n" + m.fleet.View(m.run.Fleet)
		}
	}
	var sb strings.Builder
	sb.WriteString(m.header.View(m.run, m.headerState()))
	sb.WriteString("\n")
	sb.WriteString(body)
	for n := strings.Count(body, "\n") + 1; n < h-m.headerLines-footerH; n++ {
		sb.WriteString("\n")
	}
	sb.WriteString("\n")
	k := m.c.keys
	switch {
	case m.filtering:
		// Every other key types into the filter: list what does not.
		sb.WriteString(m.help.short(k.Filter.footer()))
	case m.screen == screenDetail:
		sb.WriteString(m.help.short(k.Detail.footer()))
	case m.screen == screenHelp:
		sb.WriteString(m.help.short(k.Help.footer()))
	case m.screen == screenPicker:
		sb.WriteString(m.help.short(k.Picker.footer()))
	case m.screen == screenCompare:
		sb.WriteString(m.help.short(k.Compare.footer()))
	case m.screen == screenSide:
		sb.WriteString(m.help.short(k.Side.footer()))
	case m.screen == screenVersus:
		sb.WriteString(m.help.short(k.Versus.footer()))
	default:
		sb.WriteString(m.help.short(k.Grid.footer()))
	}
	return sb.String()
}

// headerHeight is the header's height now: a question too long for the
// status line takes lines from the body while it is asked.
func (m *model) headerHeight() int {
	if m.ask == askNothing || m.c.width == 0 {
		return headerH
	}
	return headerH - 1 + m.header.statusLines(m.headerState())
}

// headerState is the status line's words. Test ids, model and judge names,
// typed text and messages from servers or the ledger are escaped here
// (textutil.Terminal) before the header styles and measures them.
func (m *model) headerState() headerState {
	s := headerState{counts: m.board.counts, judge: m.judge, ask: m.ask != askNothing}
	switch {
	case m.ask == askStop:
		s.status, s.alert = "Stop the run? In-flight work is cancelled. [y/N]", true
	case m.ask == askQuit:
		s.status, s.alert = "Quit? The run is still going and will be stopped. [y/N]", true
	case m.ask == askInterrupt:
		s.status, s.alert = "Interrupt? The run stops and pitwall exits 130. [y/N]", true
	case m.ask == askRejudge:
		s.status, s.alert = esc(m.rejudgeQuestion()), true
	case m.ask == askExport:
		s.status, s.alert = m.exportQuestion(), true
	case m.filtering:
		cursor := "█"
		if m.c.opts.ASCII {
			cursor = "_"
		}
		typed, at := []rune(m.typed.Value()), m.typed.Position()
		s.status = "/" + esc(string(typed[:at])) + cursor + esc(string(typed[at:]))
		if len(typed) == 0 {
			hint := " names to keep (m:model t:test) · enter keeps · esc clears"
			if m.run != nil && anySeverity(m.run) {
				hint = " names to keep (m:model t:test sev:critical) · enter keeps · esc clears"
			}
			s.status += m.c.styles.dim.Render(hint)
		}
	case m.message != "":
		s.status, s.alert = esc(m.message), m.alert
	case m.run != nil && m.run.Message != "":
		s.status = esc(m.run.Message)
	case m.closed && m.run == nil:
		s.status, s.alert = "the run ended before its first snapshot", true
	}
	if m.screen == screenGrid && m.run != nil {
		var parts []string
		if m.grid.query != "" && !m.filtering {
			parts = append(parts, "/"+m.grid.query)
		}
		if m.grid.status != showAll {
			parts = append(parts, "showing "+m.grid.status.String())
		}
		if m.grid.fig != figNone {
			parts = append(parts, "cells: "+m.grid.fig.String())
		}
		if p := m.grid.positionText(); p != "" {
			parts = append(parts, p)
		}
		s.right = esc(strings.Join(parts, " · "))
	}
	return s
}
