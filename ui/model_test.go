package ui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// run executes cmd the way the program would and feeds its message back,
// returning the message.
func run(m *model, cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	m.Update(msg)
	return msg
}

func TestReadSnapshot(t *testing.T) {
	t.Parallel()
	a, b, c := makeRun(1, 1, 1), makeRun(1, 1, 1), makeRun(1, 1, 1)
	c.Final = true
	tests := []struct {
		name   string
		send   []*state.BatteryRun
		close  bool
		want   *state.BatteryRun
		closed bool
	}{
		{name: "takes the newest of those queued", send: []*state.BatteryRun{a, b, c}, want: c},
		{name: "keeps the final one when the channel closes after it", send: []*state.BatteryRun{a, c}, close: true, want: c, closed: true},
		{name: "reports a channel closed with nothing new", close: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan *state.BatteryRun, len(tt.send))
			for _, s := range tt.send {
				ch <- s
			}
			if tt.close {
				close(ch)
			}
			msg := readSnapshot(ch, make(chan struct{}))()
			if tt.want == nil {
				if _, ok := msg.(snapshotsClosedMsg); !ok {
					t.Fatalf("got %T, want snapshotsClosedMsg", msg)
				}
				return
			}
			sm, ok := msg.(snapshotMsg)
			if !ok || sm.run != tt.want || sm.closed != tt.closed {
				t.Fatalf("got %#v, want run %p closed %v", msg, tt.want, tt.closed)
			}
		})
	}
}

func TestReadSnapshotEndsWithTheProgram(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	close(done)
	if msg := readSnapshot(make(chan *state.BatteryRun), done)(); msg != nil {
		t.Fatalf("got %#v after done closed, want nil", msg)
	}
}

func TestSnapshotRearmsReaderUntilClosed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		closed bool
		want   bool
	}{
		{name: "open channel", want: true},
		{name: "closed channel", closed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan *state.BatteryRun, 1)
			m := newModel(ch, nil, Options{}, make(chan struct{}))
			run := makeRun(1, 1, 1)
			run.Final = true // no ticking: the only command is the reader
			_, cmd := m.Update(snapshotMsg{run: run, closed: tt.closed})
			if got := cmd != nil; got != tt.want {
				t.Fatalf("re-armed = %v, want %v", got, tt.want)
			}
			if cmd == nil {
				return
			}
			next := makeRun(1, 1, 1)
			ch <- next
			if msg, ok := findSnapshot(cmd); !ok || msg.run != next {
				t.Fatalf("re-armed reader returned %#v, want the next snapshot", msg)
			}
		})
	}
}

// findSnapshot runs cmd (a batch or not) and returns the snapshot it yields.
func findSnapshot(cmd tea.Cmd) (snapshotMsg, bool) {
	switch msg := cmd().(type) {
	case snapshotMsg:
		return msg, true
	case tea.BatchMsg:
		for _, c := range msg {
			if c == nil {
				continue
			}
			if s, ok := findSnapshot(c); ok {
				return s, true
			}
		}
	}
	return snapshotMsg{}, false
}

func TestStopAsksFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		final     bool
		keys      []string
		wantStops int
		wantAsk   bool
	}{
		{name: "s asks", keys: []string{"s"}, wantAsk: true},
		{name: "n declines", keys: []string{"s", "n"}},
		{name: "any other key declines", keys: []string{"s", "x"}},
		{name: "y stops", keys: []string{"s", "y"}, wantStops: 1},
		{name: "nothing to stop once the run is over", final: true, keys: []string{"s", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sceneMidInference()
			if tt.final {
				finish(snap, state.RunCompleted)
			}
			ctrl := newFakeCtrl(snap)
			m := testModel(100, 30, Options{}, ctrl)
			show(m, snap)
			run(m, press(m, tt.keys...))
			if ctrl.stops != tt.wantStops {
				t.Errorf("stops = %d, want %d", ctrl.stops, tt.wantStops)
			}
			asking := strings.Contains(drawn(m), "Stop the run?")
			if asking != tt.wantAsk {
				t.Errorf("asking = %v, want %v", asking, tt.wantAsk)
			}
		})
	}
}

func TestStoppedRunShowsCancelledCells(t *testing.T) {
	t.Parallel()
	snap := sceneMidInference()
	ctrl := newFakeCtrl(snap)
	m := testModel(100, 30, Options{}, ctrl)
	show(m, snap)
	run(m, press(m, "s", "y"))
	show(m, <-ctrl.out)
	got := drawn(m)
	for _, want := range []string{"Stopped", "⊘"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{unicodeGlyphs.spinner[0], unicodeGlyphs.loading} {
		if strings.Contains(got, gone) {
			t.Errorf("screen still shows %q after stop:\n%s", gone, got)
		}
	}
	if m.c.keys.Grid.Stop.Enabled() {
		t.Error("stop is still enabled after the run ended")
	}
}

func TestQuit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		final     bool
		keys      []string
		want      tea.Msg // the message the last key's command ends with
		wantStops int
		wantAsk   string
	}{
		{name: "quits at once when the run is over", final: true, keys: []string{"q"}, want: tea.QuitMsg{}},
		{name: "asks while running", keys: []string{"q"}, wantAsk: "Quit?"},
		{name: "stays on n", keys: []string{"q", "n"}},
		{name: "stops the run and quits on y", keys: []string{"q", "y"}, want: tea.QuitMsg{}, wantStops: 1},
		// ctrl+c is SIGINT from the keyboard: the same y/N, then the run
		// stops and the program ends interrupted (exit 130), not quit (1).
		{name: "ctrl+c asks too", keys: []string{"ctrl+c"}, wantAsk: "Interrupt?"},
		{name: "ctrl+c stays on n", keys: []string{"ctrl+c", "n"}},
		{name: "ctrl+c interrupts on y", keys: []string{"ctrl+c", "y"}, want: tea.InterruptMsg{}, wantStops: 1},
		{name: "a second ctrl+c means it", keys: []string{"ctrl+c", "ctrl+c"}, want: tea.InterruptMsg{}, wantStops: 1},
		{name: "ctrl+c answers q's question too", keys: []string{"q", "ctrl+c"}, want: tea.InterruptMsg{}, wantStops: 1},
		{name: "ctrl+c while typing a filter", keys: []string{"/", "a", "ctrl+c"}, wantAsk: "Interrupt?"},
		{name: "ctrl+c on another question asks its own", keys: []string{"s", "ctrl+c"}, wantAsk: "Interrupt?"},
		{name: "ctrl+c is an interrupt once the run is over too", final: true, keys: []string{"ctrl+c"}, want: tea.InterruptMsg{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sceneMidInference()
			if tt.final {
				finish(snap, state.RunCompleted)
			}
			ctrl := newFakeCtrl(snap)
			m := testModel(100, 30, Options{}, ctrl)
			show(m, snap)
			msg := run(m, press(m, tt.keys...))
			if _, ok := msg.(snapshotMsg); ok || msg == nil {
				msg = nil
			}
			if msg != tt.want {
				t.Errorf("the keys end with %#v, want %#v", msg, tt.want)
			}
			if ctrl.stops != tt.wantStops {
				t.Errorf("stops = %d, want %d", ctrl.stops, tt.wantStops)
			}
			status := strings.Split(drawn(m), "\n")[2]
			if tt.wantAsk != "" && !strings.Contains(status, tt.wantAsk) {
				t.Errorf("status line %q does not ask %q", status, tt.wantAsk)
			}
			if tt.wantAsk == "" && strings.Contains(status, "[y/N") {
				t.Errorf("status line still asks: %q", status)
			}
		})
	}
}

func TestRejudgeCell(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		keys      []string // moves to the cell
		wantCells []state.CellRef
	}{
		{name: "a completed cell is sent with the judge in view", keys: []string{"j"},
			wantCells: []state.CellRef{{Test: "json_schema_reply", Model: "qwen/qwen3-8b"}}},
		{name: "a failed cell has nothing to judge", keys: []string{"j", "j", "j", "j", "l"}},
		{name: "from the detail view", keys: []string{"j", "l", "l", "l", "enter"},
			wantCells: []state.CellRef{{Test: "json_schema_reply", Model: "llama-3.1-8b-instruct"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sceneJudged()
			ctrl := newFakeCtrl(snap)
			m := testModel(100, 30, Options{}, ctrl)
			show(m, snap)
			press(m, tt.keys...)
			run(m, press(m, "r", "y"))
			if tt.wantCells == nil {
				if len(ctrl.rejudged) != 0 {
					t.Fatalf("re-judged %v, want nothing", ctrl.rejudged)
				}
				return
			}
			if len(ctrl.rejudged) != 1 || !equalRefs(ctrl.rejudged[0], tt.wantCells) || ctrl.rjJudges[0] != scoring.JuryName {
				t.Fatalf("re-judged %v with %v, want %v with %q", ctrl.rejudged, ctrl.rjJudges, tt.wantCells, scoring.JuryName)
			}
			// The controller answers with a new verdict; the screen shows it.
			show(m, <-ctrl.out)
			m.Update(keyMsg("esc"))
			if !strings.Contains(drawn(m), "FAIL 0.25") {
				t.Fatalf("new verdict not on screen:\n%s", drawn(m))
			}
		})
	}
}

func equalRefs(a, b []state.CellRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRejudgeAllUsesJudgeInView(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	ctrl := newFakeCtrl(snap)
	m := testModel(100, 30, Options{}, ctrl)
	show(m, snap)
	run(m, press(m, "R", "y"))
	if len(ctrl.rjJudges) != 1 || ctrl.rjJudges[0] != scoring.JuryName {
		t.Fatalf("RejudgeAll judges = %v, want [jury]", ctrl.rjJudges)
	}
}

func TestSwitchJudge(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	ctrl := newFakeCtrl(snap)
	m := testModel(120, 30, Options{}, ctrl)
	show(m, snap)
	// The picker opens on the judge in view (the jury, last); k goes to llama.
	run(m, press(m, "J", "k", "enter"))
	if len(ctrl.switched) != 1 || ctrl.switched[0] != "llama" {
		t.Fatalf("switched = %v, want [llama]", ctrl.switched)
	}
	got := drawn(m)
	if !strings.Contains(got, "judge llama") || strings.Count(got, "PASS 0.90") != 21 {
		t.Fatalf("grid does not show llama's verdicts:\n%s", got)
	}
	if !strings.Contains(got, "PASS 21 FAIL 0 WARN 0 J-ERR 0") {
		t.Fatalf("header counts are not llama's:\n%s", got)
	}

	// A result for the jury arrives while llama is in view: kept, not shown.
	later := next(snap)
	set(later, 0, 0, 0, judged(scoring.JuryName, scoring.Fail, 0.01))
	show(m, later)
	if got := drawn(m); strings.Contains(got, "FAIL 0.01") {
		t.Fatalf("the jury's verdict shows over llama's:\n%s", got)
	}
	run(m, press(m, "J", "j", "enter"))
	if got := drawn(m); !strings.Contains(got, "FAIL 0.01") {
		t.Fatalf("the jury's kept verdict is missing once it is back in view:\n%s", got)
	}
}

func TestKeysThatCannotActAreDisabled(t *testing.T) {
	t.Parallel()
	oneJudge := func() *state.BatteryRun { r := sceneMidInference(); return r }
	noJudge := func() *state.BatteryRun { r := sceneWarnings(); return r }
	tests := []struct {
		name string
		run  func() *state.BatteryRun
		keys []string
		ctrl bool
		want map[string]bool
	}{
		// J can put none in view: the checks alone.
		{name: "running, one judge, on a completed cell", run: oneJudge, ctrl: true,
			want: map[string]bool{"s": true, "r": true, "R": true, "J": true, "e": true, "enter": true}},
		{name: "on a cell still running", run: oneJudge, ctrl: true, keys: []string{"j", "l", "l"},
			want: map[string]bool{"r": false, "enter": true}},
		{name: "finished jury run", run: sceneJudged, ctrl: true,
			want: map[string]bool{"s": false, "r": true, "J": true}},
		{name: "no judge configured", run: noJudge, ctrl: true,
			want: map[string]bool{"r": false, "R": false, "J": false}},
		{name: "no controller", run: sceneJudged,
			want: map[string]bool{"s": false, "r": false, "J": false, "e": false, "enter": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ctrl Controller
			if tt.ctrl {
				ctrl = newFakeCtrl(nil)
			}
			m := testModel(100, 30, Options{}, ctrl)
			show(m, tt.run())
			press(m, tt.keys...)
			k := m.c.keys.Grid
			byKey := map[string]bool{
				"s": k.Stop.Enabled(), "r": k.Rejudge.Enabled(), "R": k.RejudgeAll.Enabled(),
				"J": k.Judge.Enabled(), "e": k.Export.Enabled(), "enter": k.Detail.Enabled(),
			}
			for key, want := range tt.want {
				if byKey[key] != want {
					t.Errorf("%s enabled = %v, want %v", key, byKey[key], want)
				}
			}
		})
	}
}

func TestDisabledKeysAreMarkedInHelp(t *testing.T) {
	t.Parallel()
	snap := sceneJudged() // over: stop cannot act
	m := testModel(120, 40, Options{}, newFakeCtrl(snap))
	show(m, snap)
	press(m, "?")
	var stopLine string
	for _, l := range strings.Split(drawn(m), "\n") {
		if strings.Contains(l, "stop the run") {
			stopLine = l
		}
	}
	if !strings.Contains(stopLine, "stop the run (y/N) (not now)") {
		t.Fatalf("stop is not marked as unavailable: %q", stopLine)
	}
	if strings.Contains(drawn(m), "re-judge the cell (not now)") {
		t.Fatal("re-judge is marked unavailable on a judged cell")
	}
}

func TestExport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "says where it wrote", want: "exported to /tmp/pitwall/export.html"},
		{name: "says why it failed", err: errors.New("disk full"), want: "export failed: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sceneJudged()
			ctrl := newFakeCtrl(snap)
			ctrl.exportErr = tt.err
			m := testModel(100, 30, Options{}, ctrl)
			show(m, snap)
			press(m, "e")
			if got := drawn(m); !strings.Contains(got, "Export the run as?") || !strings.Contains(got, "h html") {
				t.Fatalf("e does not ask which format:\n%s", got)
			}
			if ctrl.exports != 0 {
				t.Fatal("e exported before a format was chosen")
			}
			cmd := press(m, "h")
			if m.c.keys.Grid.Export.Enabled() {
				t.Error("export stays enabled while one is under way")
			}
			run(m, cmd)
			if !strings.Contains(drawn(m), tt.want) {
				t.Fatalf("status lacks %q:\n%s", tt.want, drawn(m))
			}
		})
	}
}

func TestResize(t *testing.T) {
	t.Parallel()
	m := testModel(120, 30, Options{}, newFakeCtrl(nil))
	show(m, sceneMidInference())
	sizes := []struct {
		w, h  int
		small bool
	}{{59, 30, true}, {120, 14, true}, {60, 15, false}, {200, 60, false}, {30, 5, true}}
	for _, s := range sizes {
		m.Update(tea.WindowSizeMsg{Width: s.w, Height: s.h})
		got := drawn(m)
		if small := strings.Contains(got, "pitwall needs at least 60×15"); small != s.small {
			t.Errorf("%dx%d: too-small message = %v, want %v", s.w, s.h, small, s.small)
		}
		lines := strings.Split(got, "\n")
		if len(lines) != s.h {
			t.Errorf("%dx%d: %d lines", s.w, s.h, len(lines))
		}
		for i, l := range lines {
			if w := m.c.wm.StringWidth(l); w > s.w {
				t.Errorf("%dx%d: line %d is %d wide", s.w, s.h, i, w)
			}
		}
	}
}

// TestWidthFollowsTheTerminal: the screen measures by wcwidth (⚠️ one
// column) as the headless lines do, until the terminal answers the mode
// 2027 query as bubbletea's renderer takes it (set, reset or permanently
// set); then by grapheme clusters (⚠️ two), as the renderer does.
func TestWidthFollowsTheTerminal(t *testing.T) {
	t.Parallel()
	if wm := plainCommon(Options{}).wm; wm != ansi.WcWidth {
		t.Fatalf("headless lines measure by %v, want wcwidth", wm)
	}
	tests := []struct {
		name    string
		reports []ansi.ModeSetting
		want    ansi.Method
		warnW   int
	}{
		{"no answer", nil, ansi.WcWidth, 1},
		{"mode not recognised", []ansi.ModeSetting{ansi.ModeNotRecognized}, ansi.WcWidth, 1},
		{"permanently reset", []ansi.ModeSetting{ansi.ModePermanentlyReset}, ansi.WcWidth, 1},
		{"set", []ansi.ModeSetting{ansi.ModeSet}, ansi.GraphemeWidth, 2},
		{"reset", []ansi.ModeSetting{ansi.ModeReset}, ansi.GraphemeWidth, 2},
		{"permanently set", []ansi.ModeSetting{ansi.ModePermanentlySet}, ansi.GraphemeWidth, 2},
		{"set, then a late not recognised", []ansi.ModeSetting{ansi.ModeSet, ansi.ModeNotRecognized}, ansi.GraphemeWidth, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(nil, nil, Options{}, nil)
			q := newQualifyModel(nil, Options{}, nil)
			for _, v := range tt.reports {
				m.Update(tea.ModeReportMsg{Mode: ansi.ModeUnicodeCore, Value: v})
				q.Update(tea.ModeReportMsg{Mode: ansi.ModeUnicodeCore, Value: v})
			}
			// A report on another mode says nothing about widths.
			m.Update(tea.ModeReportMsg{Mode: ansi.ModeSynchronizedOutput, Value: ansi.ModeSet})
			if m.c.wm != tt.want || q.c.wm != tt.want {
				t.Fatalf("grid measures by %v, qualify by %v; want %v", m.c.wm, q.c.wm, tt.want)
			}
			if w := m.c.sw(m.c.glyphs.errored); w != tt.warnW {
				t.Fatalf("⚠️ is %d columns, want %d", w, tt.warnW)
			}
		})
	}
}

func TestTickAnimatesOnlyWhileLive(t *testing.T) {
	t.Parallel()
	snap := sceneMidInference()
	m := testModel(100, 30, Options{}, nil)
	show(m, snap)
	before := drawn(m)
	if _, cmd := m.Update(tickMsg(t0)); cmd == nil {
		t.Fatal("ticks stopped while the run is live")
	}
	if after := drawn(m); after == before || !strings.Contains(after, unicodeGlyphs.spinner[1]) {
		t.Fatalf("spinner did not turn:\n%s", after)
	}
	over := next(snap)
	finish(over, state.RunCompleted)
	show(m, over)
	if _, cmd := m.Update(tickMsg(t0)); cmd != nil {
		t.Fatal("ticks go on after the run ended")
	}
}

func TestDetailFollowsSnapshots(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	m := testModel(100, 60, Options{}, nil)
	show(m, snap)
	press(m, "j", "enter") // json_schema_reply × qwen: jury FAIL 0.50
	if !strings.Contains(drawn(m), "jury  FAIL 0.50") {
		t.Fatalf("detail lacks the jury verdict:\n%s", drawn(m))
	}
	later := next(snap)
	set(later, 1, 0, 0, judged(scoring.JuryName, scoring.Pass, 0.97))
	show(m, later)
	if !strings.Contains(drawn(m), "jury  PASS 0.97") {
		t.Fatalf("detail did not follow the new snapshot:\n%s", drawn(m))
	}
	press(m, "esc")
	if m.screen != screenGrid {
		t.Fatal("esc did not go back to the grid")
	}
}

func TestCountsAreForTheJudgeInView(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	snap.Counts = state.Tally{Pass: 999} // the runner's, for its own judge
	m := testModel(120, 30, Options{}, nil)
	show(m, snap)
	if got := drawn(m); strings.Contains(got, "999") || !strings.Contains(got, "PASS 5 FAIL 5 WARN 6 J-ERR 4") {
		t.Fatalf("header does not count the jury's verdicts:\n%s", got)
	}
}

func TestRejudgeAsksWithTheCostAndSCancelsIt(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	ctrl := newFakeCtrl(snap)
	m := testModel(160, 30, Options{}, ctrl)
	show(m, snap)

	press(m, "R")
	got := drawn(m)
	completed, judged := m.board.counts.Completed, m.board.counts.Judged
	want := "Re-judge " + itoa(completed) + " cells with jury? " + itoa(completed*2) + " judge calls; " + itoa(judged) + " verdicts now"
	if !strings.Contains(got, want) || !strings.Contains(got, "[y/N]") {
		t.Fatalf("R does not ask with the cost (want %q):\n%s", want, got)
	}
	run(m, press(m, "n"))
	if len(ctrl.rjJudges) != 0 || strings.Contains(drawn(m), "[y/N]") {
		t.Fatalf("n re-judged %v or kept asking:\n%s", ctrl.rjJudges, drawn(m))
	}

	run(m, press(m, "R", "y"))
	if len(ctrl.rjJudges) != 1 {
		t.Fatalf("y did not re-judge: %v", ctrl.rjJudges)
	}
	busy := next(snap)
	busy.JudgeInFlight = 5
	show(m, busy)
	if !strings.Contains(drawn(m), "s cancels") {
		t.Fatalf("a re-judge in progress does not say s cancels it:\n%s", drawn(m))
	}
	run(m, press(m, "s"))
	if ctrl.stops != 1 {
		t.Fatalf("s during a re-judge sent %d stops, want 1 (no question: cancelling costs nothing)", ctrl.stops)
	}
}

// A stop pressed straight after y waits for the controller to take the
// re-judge, so that it cannot overtake the work it cancels; once taken, s
// still cancels until a snapshot shows the work.
func TestStopRightAfterRejudgeCancelsIt(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	if !snap.Final || snap.JudgeInFlight != 0 {
		t.Fatal("the scene should be a finished run with no judge work")
	}
	ctrl := newFakeCtrl(snap)
	m := testModel(120, 30, Options{}, ctrl)
	show(m, snap)

	rejudge := press(m, "R", "y")
	if rejudge == nil {
		t.Fatal("y sent no re-judge")
	}
	if cmd := press(m, "s"); cmd != nil {
		t.Fatal("s went out before the re-judge was taken")
	}
	if !strings.Contains(drawn(m), "cancelling the re-judge") {
		t.Fatalf("s said nothing:\n%s", drawn(m))
	}
	_, stop := m.Update(rejudge())
	if stop == nil {
		t.Fatal("the stop was not sent once the re-judge was taken")
	}
	run(m, stop)
	for _, want := range []string{"rejudge-all", "stop"} {
		if got := <-ctrl.calls; got != want {
			t.Fatalf("controller calls out of order: %s where %s was due", got, want)
		}
	}

	// Taken but not yet shown: s cancels at once.
	m = testModel(120, 30, Options{}, ctrl)
	show(m, snap)
	msg := run(m, press(m, "r", "y"))
	sent, ok := msg.(rejudgeSentMsg)
	if !ok || sent.seq <= snap.Seq {
		t.Fatalf("the re-judge answered %#v, want a later snapshot's seq", msg)
	}
	<-ctrl.calls
	if !m.c.keys.Grid.Stop.Enabled() {
		t.Fatal("s is off while the re-judge is taken but not yet shown")
	}
	show(m, <-ctrl.out)
	show(m, <-ctrl.out) // the stop's snapshot from above, then the re-judge's
	if m.c.keys.Grid.Stop.Enabled() {
		t.Fatal("s still on once a snapshot shows the re-judge over")
	}
}

func TestExportAsksWhichFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		keys []string
		want string // the format asked for; "" none
	}{
		{[]string{"e", "j"}, "json"},
		{[]string{"e", "enter"}, "json"},
		{[]string{"e", "c"}, "csv"},
		{[]string{"e", "m"}, "md"},
		{[]string{"e", "h"}, "html"},
		{[]string{"e", "u"}, "junit"},
		{[]string{"e", "t"}, "text"},
		{[]string{"e", "x"}, ""},
		{[]string{"e", "esc"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.keys, " "), func(t *testing.T) {
			t.Parallel()
			snap := sceneJudged()
			ctrl := newFakeCtrl(snap)
			m := testModel(100, 30, Options{}, ctrl)
			show(m, snap)
			run(m, press(m, tt.keys...))
			if tt.want == "" {
				if ctrl.exports != 0 {
					t.Fatalf("exported %v after %v", ctrl.formats, tt.keys)
				}
				if !strings.Contains(drawn(m), "nothing exported") {
					t.Errorf("no word that nothing was exported:\n%s", drawn(m))
				}
				return
			}
			if len(ctrl.formats) != 1 || ctrl.formats[0] != tt.want {
				t.Fatalf("exported %v, want [%s]", ctrl.formats, tt.want)
			}
			if !strings.Contains(drawn(m), "exported to /tmp/pitwall/export."+tt.want) {
				t.Errorf("status does not say where:\n%s", drawn(m))
			}
		})
	}
}
