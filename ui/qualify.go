package ui

import (
	"context"
	"errors"
	"fmt"
	"pitwall/judge/scoring"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Qualify is a judge qualification (`pitwall qualify`) as its screen shows
// it: rows are the judge battery's cases, columns the judges, and a cell is
// ✓ when the judge's verdict is the one expected, ✗ when it is not. The
// caller computes it (the figures are the judge package's); the screen only
// draws it. A snapshot is never changed once sent.
type Qualify struct {
	Name    string   // the config's name
	Run     string   // the ledger's run id
	Judges  []string // the columns, in order; the jury last when it is qualified too
	Samples int      // answers per judge per case
	Rows    []QualifyRow
	// Figures are each judge's figures over the answers in so far, in
	// Judges' order.
	Figures []QualifyFigures
	// Answers is how many answers came back of Total asked for, every
	// judge's.
	Answers, Total int
	Started, Ended time.Time // Ended is zero while it runs
	Final          bool      // nothing more will come: every answer is in, or it stopped
	Message        string    // how it ended, or what went wrong
}

// QualifyRow is one case of the judge battery.
type QualifyRow struct {
	Case   string
	Expect scoring.Verdict // Pass or Fail
	Cells  []QualifyCell   // one per judge, in Judges' order
}

// QualifyCell is one judge's answers on one case.
type QualifyCell struct {
	Answers int // answers in: of Of (the samples, or for the jury every judge's)
	Of      int
	// Verdict is the vote over the answers once all of them are in (""
	// before); scoring.Error is a J-ERR. Correct says it is the one expected.
	Verdict scoring.Verdict
	Correct bool
}

// QualifyFigures are one judge's figures (see qualify.Figures (edges/qualify) for how each is
// counted).
type QualifyFigures struct {
	Judge, Model     string
	Verdicts         int // answers counted
	Correct          int
	Accuracy         float64
	Kappa            float64 // Cohen's κ against the expected verdicts
	Consistency      float64 // agreement across samples
	ConsistencyCases int     // cases with two answers or more; 0: no consistency
	ErrorRate        float64 // J-ERR share
	Below            bool    // under --min-accuracy
}

// RunQualifyTUI shows a qualification's snapshots until the user quits and
// returns the last one it drew. Quitting before the last snapshot asks
// first; the caller then stops the qualification. ctrl+c ends the program
// with ErrInterrupted (asking first while it runs), as in RunTUI. The
// screen it leaves is cleared: the caller prints its table after it.
func RunQualifyTUI(ctx context.Context, snaps <-chan *Qualify, opts Options) (*Qualify, error) {
	return runQualifyTUI(ctx, snaps, opts)
}

func runQualifyTUI(ctx context.Context, snaps <-chan *Qualify, opts Options, extra ...tea.ProgramOption) (*Qualify, error) {
	done := make(chan struct{})
	defer close(done)
	m := newQualifyModel(snaps, opts, done)
	p := tea.NewProgram(m, append([]tea.ProgramOption{tea.WithContext(ctx)}, extra...)...)
	if _, err := p.Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return m.q, fmt.Errorf("ui: %w", ctx.Err())
		}
		return m.q, fmt.Errorf("ui: %w", err)
	}
	return m.q, nil
}

// qualifySnapshotMsg carries the newest qualification snapshot; closed says
// the channel closed after it.
type qualifySnapshotMsg struct {
	q      *Qualify
	closed bool
}

// readQualify is readSnapshot for a qualification: it waits for the next
// snapshot, then takes any queued behind it, so the newest is drawn.
func readQualify(ch <-chan *Qualify, done <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		var q *Qualify
		select {
		case s, ok := <-ch:
			if !ok {
				return qualifySnapshotMsg{closed: true}
			}
			q = s
		case <-done:
			return nil
		}
		for {
			select {
			case s, ok := <-ch:
				if !ok {
					return qualifySnapshotMsg{q: q, closed: true}
				}
				q = s
			default:
				return qualifySnapshotMsg{q: q}
			}
		}
	}
}

// qualifyModel is the qualify program's root: a header, the case grid, the
// judges' figures and the footer. It reads snapshots and sends nothing
// anywhere: stopping is the caller's, once the program has ended.
type qualifyModel struct {
	c     *common
	snaps <-chan *Qualify
	done  <-chan struct{}
	help  help

	q       *Qualify
	closed  bool
	ask     question // askNothing, askQuit or askInterrupt
	off     int      // first case row shown
	colOff  int      // first judge column shown
	frame   int      // spinner frame
	ticking bool
}

func newQualifyModel(snaps <-chan *Qualify, opts Options, done <-chan struct{}) *qualifyModel {
	c := newCommon(opts)
	return &qualifyModel{c: c, snaps: snaps, done: done, help: help{c: c}}
}

// Init starts reading snapshots.
func (m *qualifyModel) Init() tea.Cmd { return readQualify(m.snaps, m.done) }

// running reports whether answers are still coming.
func (m *qualifyModel) running() bool { return m.q == nil && !m.closed || m.q != nil && !m.q.Final }

// Update applies a message; it does no I/O.
func (m *qualifyModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		m.help.SetSize(msg.Width, 1)
		m.scrollBy(0)
	case tea.ModeReportMsg:
		if unicodeCore(msg) {
			m.c.wm = ansi.GraphemeWidth
		}
	case qualifySnapshotMsg:
		if msg.q != nil {
			m.q = msg.q
			m.scrollBy(0)
		}
		var cmds []tea.Cmd
		if msg.closed {
			m.closed = true
		} else {
			cmds = append(cmds, readQualify(m.snaps, m.done))
		}
		if m.running() && !m.ticking {
			m.ticking = true
			cmds = append(cmds, tick())
		}
		cmd = tea.Batch(cmds...)
	case tickMsg:
		m.frame++
		if m.running() {
			cmd = tick()
		} else {
			m.ticking = false
		}
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	}
	m.refreshKeys()
	return m, cmd
}

// refreshKeys enables the moves that can move now; the footer lists those.
func (m *qualifyModel) refreshKeys() {
	k := &m.c.keys.Qualify
	k.scrollKeyMap.enable(m.lastOff() > 0)
	k.Left.SetEnabled(m.colOff > 0)
	k.Right.SetEnabled(m.hiddenRight())
}

// key routes a key press: a pending y/N first, then the moves and quit.
func (m *qualifyModel) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys.Qualify
	interrupt := key.Matches(msg, m.c.keys.Interrupt)
	yes := key.Matches(msg, m.c.keys.Prompt.Yes)
	if m.ask != askNothing {
		q := m.ask
		m.ask = askNothing
		switch {
		case interrupt || yes && q == askInterrupt:
			return tea.Interrupt
		case yes:
			return tea.Quit
		}
		return nil
	}
	switch {
	case interrupt:
		if m.running() {
			m.ask = askInterrupt
			return nil
		}
		return tea.Interrupt
	case key.Matches(msg, k.Quit):
		if m.running() {
			m.ask = askQuit
			return nil
		}
		return tea.Quit
	case key.Matches(msg, k.Down):
		m.scrollBy(1)
	case key.Matches(msg, k.Up):
		m.scrollBy(-1)
	case key.Matches(msg, k.PageDown):
		m.scrollBy(max(m.gridRows()-1, 1))
	case key.Matches(msg, k.PageUp):
		m.scrollBy(-max(m.gridRows()-1, 1))
	case key.Matches(msg, k.Top):
		m.off = 0
	case key.Matches(msg, k.Bottom):
		m.off = m.lastOff()
	case key.Matches(msg, k.Right):
		if m.q != nil && m.colOff < len(m.q.Judges)-1 && m.hiddenRight() {
			m.colOff++
		}
	case key.Matches(msg, k.Left):
		m.colOff = max(m.colOff-1, 0)
	}
	return nil
}

// scrollBy moves the rows in view by n, within the cases.
func (m *qualifyModel) scrollBy(n int) { m.off = min(max(m.off+n, 0), m.lastOff()) }

// lastOff is the offset that shows the last case.
func (m *qualifyModel) lastOff() int {
	if m.q == nil {
		return 0
	}
	return max(len(m.q.Rows)-m.gridRows(), 0)
}

// View draws the screen on the alternate screen.
func (m *qualifyModel) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}
