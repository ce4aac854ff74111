package ui

import (
	"pitwall/judge/scoring"
	"pitwall/runner/state"
	"slices"
	"strconv"
	"strings"

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
	k := m.c.keys.Help
	switch {
	case key.Matches(msg, k.Close, k.Back):
		m.screen = m.back
	default:
		scrollKey(msg, k.scrollKeyMap, &m.help)
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

// compareKey scrolls the ranking; esc and c close it.
func (m *model) compareKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys.Compare
	switch {
	case key.Matches(msg, k.Back, k.Compare):
		m.screen = screenGrid
	case key.Matches(msg, k.Help):
		m.openHelp()
	default:
		scrollKey(msg, k.scrollKeyMap, &m.rank)
	}
	return nil
}

// sideKey scrolls the side-by-side view; esc and v close it.
func (m *model) sideKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys.Side
	switch {
	case key.Matches(msg, k.Back, k.Close):
		m.screen = screenGrid
	case key.Matches(msg, k.Help):
		m.openHelp()
	case key.Matches(msg, k.Left):
		m.side.left()
	case key.Matches(msg, k.Right):
		m.side.right()
	default:
		scrollKey(msg, k.scrollKeyMap, &m.side)
	}
	return nil
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

// rejudgeCell asks for the completed repeats of (t, m) to be judged again by
// the judge in view; inference is not repeated.
func (m *model) rejudgeCell(t, mi int) tea.Cmd {
	refs := completedRefs(m.run, t, mi)
	if len(refs) == 0 {
		m.say("nothing to re-judge: this cell's inference did not complete", true)
		return nil
	}
	return m.askRejudge(refs, false)
}

// asking is what a pending re-judge question is about.
type asking struct {
	refs []state.CellRef
	all  bool // the whole run (R)
	// What the calls should cost (Ledger.Estimate), worked out once, by
	// a command (it reads the ledger), when the question is asked; id tells
	// its answer from one to an earlier question.
	id        int
	estimated bool
	tokens    int
	cost      float64
	priced    bool
}

// askRejudge asks before spending judge calls: how many it will make, what
// they should cost (filled in when the estimate arrives), and how many
// verdicts the judge in view has on those cells now.
func (m *model) askRejudge(refs []state.CellRef, all bool) tea.Cmd {
	if len(refs) == 0 {
		m.say("nothing to re-judge: no cell's inference completed", true)
		return nil
	}
	m.asked++
	m.asking = asking{refs: refs, all: all, id: m.asked}
	m.ask = askRejudge
	if !m.c.opts.hasLedger() {
		return nil
	}
	est := m.c.opts.ledger().Estimate
	id, judge, samples := m.asked, m.judge, m.rejudgeSamples()
	return func() tea.Msg {
		e := estimatedMsg{id: id}
		e.tokens, e.cost, e.priced, e.ok = est(refs, judge, samples)
		return e
	}
}

// estimatedMsg is what a re-judge question's calls should cost.
type estimatedMsg struct {
	id         int
	tokens     int
	cost       float64
	priced, ok bool
}

// estimated fills the pending question's cost in, if it is still the one
// the estimate was made for.
func (m *model) estimated(e estimatedMsg) {
	if m.ask != askRejudge || m.asking.id != e.id {
		return
	}
	a := &m.asking
	a.tokens, a.cost, a.priced, a.estimated = e.tokens, e.cost, e.priced, e.ok
}

// rejudgeSamples is how many calls a re-judge makes per judge per cell.
func (m *model) rejudgeSamples() int {
	if m.run == nil {
		return 1
	}
	return max(m.run.Plan.Samples, 1)
}

// rejudgeQuestion names the cost of the pending re-judge.
func (m *model) rejudgeQuestion() string {
	refs := m.asking.refs
	judges := 1
	if m.judge == scoring.JuryName && m.run != nil {
		judges = max(len(m.run.Plan.Judges), 1)
	}
	samples := m.rejudgeSamples()
	have := 0
	if m.run != nil {
		idx := map[string]int{}
		for i, t := range m.run.Tests {
			idx["t"+t.ID] = i
		}
		for i, mo := range m.run.Models {
			idx["m"+mo] = i
		}
		for _, r := range refs {
			if c := m.run.Cell(idx["t"+r.Test], idx["m"+r.Model], r.Repeat); c != nil {
				if j := c.Judgment(m.judge); j != nil && j.Status == state.JudgmentDone {
					have++
				}
			}
		}
	}
	what := itoa(len(refs)) + " cells"
	if len(refs) == 1 {
		what = refs[0].Model + " " + m.c.glyphs.times + " " + refs[0].Test
	}
	cost := ""
	if a := m.asking; a.estimated {
		cost = ", ~" + thousands(a.tokens) + " tokens"
		if a.priced {
			cost += ", ~$" + strconv.FormatFloat(a.cost, 'f', costDigits(a.cost), 64)
		}
	}
	return "Re-judge " + what + " with " + m.judge + "? " + itoa(len(refs)*judges*samples) + " judge calls" + cost + "; " +
		itoa(have) + " verdicts now, kept until the new ones are in. [y/N]"
}

// rejudgeNow sends the re-judge the user said yes to.
func (m *model) rejudgeNow() tea.Cmd {
	a := m.asking
	m.asking = asking{}
	m.handOver()
	if a.all {
		m.sayJudging("re-judging the run with " + m.judge + "… (s cancels)")
		return m.act.rejudgeAll(m.judge)
	}
	m.sayJudging("re-judging " + itoa(len(a.refs)) + " cells with " + m.judge + "… (s cancels)")
	if len(a.refs) == 1 {
		m.sayJudging("re-judging " + a.refs[0].Model + " " + m.c.glyphs.times + " " + a.refs[0].Test + " with " + m.judge + "… (s cancels)")
	}
	return m.act.rejudge(a.refs, m.judge)
}

// rejudging reports whether judge work runs after the run's end: a
// re-judge or a judge switch, which s cancels.
func (m *model) rejudging() bool {
	return m.run != nil && m.run.Final && m.ctrl != nil && (m.run.JudgeInFlight > 0 || m.hand.pending())
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

// refreshKeys enables the keys that can act now, in every component's key
// map; footers leave the others out and the full help greys them.
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
	rejudge := judging && onCell && len(completedRefs(m.run, cellT, cellM)) > 0
	compare := have && (m.screen == screenGrid || m.rankingOpen() ||
		m.screen == screenHelp && m.back == screenGrid)
	// The moves scroll the key map too, run or not.
	moves := have || m.screen == screenHelp

	g := &k.Grid
	enable(have, &g.Left, &g.Right, &g.Figures, &g.Transpose, &g.Filter, &g.StatusFilter)
	enable(moves, &g.Up, &g.Down, &g.Top, &g.Bottom, &g.PageUp, &g.PageDown)
	g.Compare.SetEnabled(compare)
	g.Detail.SetEnabled(onCell)
	g.SideBySide.SetEnabled(onCell && m.screen != screenDetail)
	g.Versus.SetEnabled(onCell && m.screen != screenDetail && m.c.opts.hasLedger())
	g.Stop.SetEnabled(ctrl && (m.running() && !m.stopping || m.rejudging()))
	g.ClearFilter.SetEnabled(have && m.screen == screenGrid && m.grid.query != "")
	g.Rejudge.SetEnabled(rejudge)
	g.RejudgeAll.SetEnabled(judging && m.board.counts.Completed > 0)
	// The picker always has another choice: a judge, or none.
	g.Judge.SetEnabled(judges)
	g.Export.SetEnabled(have && ctrl && !m.exporting)

	d := &k.Detail
	enable(moves, &d.Up, &d.Down, &d.PageDown, &d.Top, &d.Bottom)
	d.Rejudge.SetEnabled(rejudge)
	d.Judge.SetEnabled(judges)

	k.Compare.scrollKeyMap.enable(moves)
	k.Compare.Compare.SetEnabled(compare)
	k.Help.scrollKeyMap.enable(moves)
	k.Side.scrollKeyMap.enable(moves)
	k.Versus.scrollKeyMap.enable(moves)
	k.Versus.Choose.SetEnabled(m.screen == screenVersus && m.versus.choosing() && len(m.versus.runs) > 0)
	k.Picker.Judge.SetEnabled(judges)
}

// enable enables bs, or disables them.
func enable(on bool, bs ...*key.Binding) {
	for _, b := range bs {
		b.SetEnabled(on)
	}
}

// enable enables every move of k, or disables them.
func (k *scrollKeyMap) enable(on bool) {
	enable(on, &k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom)
}
