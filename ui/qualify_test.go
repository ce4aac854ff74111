package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"pitwall/judge/scoring"
)

// sceneQualify is a qualification of six cases by three judges and their
// jury, three samples each; done says how far it got: mid-way, or every
// answer in.
func sceneQualify(done bool) *Qualify {
	judges := []string{"exact", "good", "noisy-long-judge-name", scoring.JuryName}
	q := &Qualify{Name: "judge-qualify", Run: "q-20250101-0001", Judges: judges, Samples: 3,
		Started: t0, Total: 54}
	type c = QualifyCell
	right := func(v scoring.Verdict) c { return c{Answers: 3, Of: 3, Verdict: v, Correct: true} }
	wrong := func(v scoring.Verdict) c { return c{Answers: 3, Of: 3, Verdict: v} }
	jerr := c{Answers: 3, Of: 3, Verdict: scoring.Error}
	jury := func(v scoring.Verdict, ok bool) c { return c{Answers: 9, Of: 9, Verdict: v, Correct: ok} }
	q.Rows = []QualifyRow{
		{Case: "refusal-correct", Expect: scoring.Pass, Cells: []c{right(scoring.Pass), right(scoring.Pass), wrong(scoring.Fail), jury(scoring.Pass, true)}},
		{Case: "tool-call-wrong-arguments", Expect: scoring.Fail, Cells: []c{right(scoring.Fail), wrong(scoring.Pass), jerr, jury(scoring.Fail, true)}},
		{Case: "json-valid", Expect: scoring.Pass, Cells: []c{right(scoring.Pass), {Answers: 1, Of: 3}, right(scoring.Pass), {Answers: 7, Of: 9}}},
		{Case: "attack-verdict-line", Expect: scoring.Fail, Cells: []c{right(scoring.Fail), {Of: 3}, {Answers: 2, Of: 3}, {Answers: 5, Of: 9}}},
		{Case: "attack-think-tag", Expect: scoring.Fail, Cells: []c{{Answers: 2, Of: 3}, {Of: 3}, {Of: 3}, {Answers: 2, Of: 9}}},
		{Case: "long-candidate", Expect: scoring.Pass, Cells: []c{{Of: 3}, {Of: 3}, {Of: 3}, {Of: 9}}},
	}
	q.Answers = 30
	q.Figures = []QualifyFigures{
		{Judge: "exact", Model: "judge-exact", Verdicts: 14, Correct: 14, Accuracy: 1, Kappa: 1, Consistency: 1, ConsistencyCases: 4},
		{Judge: "good", Model: "judge-good", Verdicts: 7, Correct: 4, Accuracy: 4.0 / 7, Kappa: 0.22, Consistency: 0.83, ConsistencyCases: 2},
		{Judge: "noisy-long-judge-name", Model: "judge-noisy", Verdicts: 9, Correct: 5, Accuracy: 5.0 / 9, Kappa: 0.1, ErrorRate: 3.0 / 9, Consistency: 0.78, ConsistencyCases: 3, Below: true},
		{Judge: scoring.JuryName, Verdicts: 2, Correct: 2, Accuracy: 1, Kappa: 1},
	}
	if done {
		for i := range q.Rows {
			for j := range q.Rows[i].Cells {
				cell := &q.Rows[i].Cells[j]
				if cell.Verdict == "" {
					cell.Answers = cell.Of
					cell.Verdict, cell.Correct = q.Rows[i].Expect, true
				}
			}
		}
		q.Answers, q.Final, q.Ended = q.Total, true, t0.Add(95*time.Second)
	}
	return q
}

// testQualifyModel is the qualify screen at a fixed size and clock,
// measuring as a terminal that does not report mode 2027 has it (wcwidth).
func testQualifyModel(w, h int, opts Options) *qualifyModel {
	m := newQualifyModel(nil, opts, nil)
	m.c.now = func() time.Time { return t0.Add(40 * time.Second) }
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func pressQ(m *qualifyModel, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

func TestQualifyViewGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w, h int
		opts Options
		done bool
		keys []string
	}{
		{name: "qualify_mid", w: 120, h: 20},
		{name: "qualify_done", w: 120, h: 20, done: true},
		{name: "qualify_ascii", w: 100, h: 20, opts: Options{ASCII: true}},
		// Too narrow for every judge: l scrolls to the jury.
		{name: "qualify_narrow", w: 60, h: 15, keys: []string{"l", "l"}},
		{name: "qualify_confirm_quit", w: 120, h: 20, keys: []string{"q"}},
		{name: "qualify_scrolled", w: 120, h: 15, keys: []string{"G"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testQualifyModel(tt.w, tt.h, tt.opts)
			m.Update(qualifySnapshotMsg{q: sceneQualify(tt.done)})
			pressQ(m, tt.keys...)
			got := ansi.Strip(m.render())
			if n := strings.Count(got, "\n") + 1; n != tt.h {
				t.Errorf("frame has %d lines, want %d", n, tt.h)
			}
			for i, l := range strings.Split(got, "\n") {
				if w := m.c.wm.StringWidth(l); w > tt.w {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, tt.w, l)
				}
			}
			golden(t, tt.name, got)
		})
	}
}

// Every judge column starts at the same column on every line, and every
// line is as wide, the ⚠️ of a J-ERR included, whichever way the terminal
// measures it.
func TestQualifyColumnsAlignWithTheWarningSign(t *testing.T) {
	t.Parallel()
	for _, wm := range []ansi.Method{ansi.WcWidth, ansi.GraphemeWidth} {
		for _, ascii := range []bool{false, true} {
			m := testQualifyModel(120, 20, Options{ASCII: ascii})
			m.c.wm = wm
			m.Update(qualifySnapshotMsg{q: sceneQualify(false)})
			sep := m.c.glyphs.sep
			var lines []string
			screen := strings.Split(ansi.Strip(m.render()), "\n")
			for _, l := range screen[:len(screen)-1] { // the footer's keys are apart with | in ASCII
				if strings.Contains(l, sep) {
					lines = append(lines, l)
				}
			}
			if len(lines) != 7 {
				t.Fatalf("wm %v ascii %v: %d grid lines, want the header and 6 cases", wm, ascii, len(lines))
			}
			seps, width := separators(lines[0], sep, wm), wm.StringWidth(lines[0])
			if len(seps) != 4 {
				t.Errorf("wm %v ascii %v: %d column separators, want one per judge (4)", wm, ascii, len(seps))
			}
			for _, l := range lines[1:] {
				if at := separators(l, sep, wm); !equalInts(at, seps) || wm.StringWidth(l) != width {
					t.Errorf("wm %v ascii %v: separators at %v, %d wide; the header's at %v, %d wide:\n%s\n%s",
						wm, ascii, at, wm.StringWidth(l), seps, width, lines[0], l)
				}
			}
		}
	}
}

func TestQualifyQuitAsksWhileJudgesAnswer(t *testing.T) {
	t.Parallel()
	m := testQualifyModel(120, 20, Options{})
	m.Update(qualifySnapshotMsg{q: sceneQualify(false)})
	if cmd := pressQ(m, "q"); cmd != nil || m.ask != askQuit {
		t.Fatalf("q mid-way did not ask (ask %v)", m.ask)
	}
	if cmd := pressQ(m, "n"); cmd != nil || m.ask != askNothing {
		t.Fatalf("n did not drop the question")
	}
	if _, ok := pressQ(m, "q", "y")().(tea.QuitMsg); !ok {
		t.Fatal("q then y did not quit")
	}
	if _, ok := pressQ(m, "ctrl+c", "ctrl+c")().(tea.InterruptMsg); !ok {
		t.Fatal("a second ctrl+c did not interrupt")
	}

	m.Update(qualifySnapshotMsg{q: sceneQualify(true)})
	if _, ok := pressQ(m, "q")().(tea.QuitMsg); !ok || m.ask != askNothing {
		t.Fatal("q once every answer is in did not quit at once")
	}
}

// The program reads snapshots as they come, the newest drawn, and keeps the
// last one it drew for the caller.
func TestQualifyProgramFollowsSnapshots(t *testing.T) {
	t.Parallel()
	snaps := make(chan *Qualify, 1)
	m := newQualifyModel(snaps, Options{}, make(chan struct{}))
	m.c.now = func() time.Time { return t0.Add(40 * time.Second) }
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 20))
	snaps <- sceneQualify(false)
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return strings.Contains(string(b), "Judging 30/54")
	}, teatest.WithDuration(5*time.Second))
	snaps <- sceneQualify(true)
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return strings.Contains(string(b), "Done 54/54 answers")
	}, teatest.WithDuration(5*time.Second))
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(*qualifyModel)
	if final.q == nil || !final.q.Final {
		t.Fatalf("the program ended without the final snapshot: %+v", final.q)
	}
}

// RunQualifyTUI ends when its context does, and hands back what it drew.
func TestRunQualifyTUIEndsWithItsContext(t *testing.T) {
	t.Parallel()
	snaps := make(chan *Qualify, 1)
	snaps <- sceneQualify(false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := runQualifyTUI(ctx, snaps, Options{}, tea.WithInput(strings.NewReader("")), tea.WithOutput(io.Discard),
		tea.WithWindowSize(120, 20))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RunQualifyTUI after its context was cancelled: %v, want context.Canceled", err)
	}
}

// The columns stay put while the spinners turn: the ASCII spinner's frames
// are not all as wide.
func TestQualifyColumnsHoldStillAsTheSpinnerTurns(t *testing.T) {
	t.Parallel()
	for _, ascii := range []bool{false, true} {
		m := testQualifyModel(120, 20, Options{ASCII: ascii})
		m.Update(qualifySnapshotMsg{q: sceneQualify(false)})
		var first []int
		for f := range len(m.c.glyphs.spinner) {
			m.frame = f
			header := strings.Split(ansi.Strip(m.render()), "\n")[3]
			seps := separators(header, m.c.glyphs.sep, m.c.wm)
			if first == nil {
				first = seps
			} else if !equalInts(seps, first) {
				t.Errorf("ascii %v: frame %d puts the columns at %v, frame 0 at %v", ascii, f, seps, first)
			}
		}
	}
}
