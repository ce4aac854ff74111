package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// watched wraps the root model so that a test can wait on what the program
// draws after each message, rather than sleeping.
type watched struct {
	*model
	mu      sync.Mutex
	screen  string
	changed chan struct{}
}

func watch(m *model) *watched {
	return &watched{model: m, changed: make(chan struct{}, 1)}
}

func (w *watched) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := w.model.Update(msg)
	s := ansi.Strip(w.model.render())
	w.mu.Lock()
	w.screen = s
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return w, cmd
}

// waitFor waits until the screen satisfies ok.
func (w *watched) waitFor(t *testing.T, what string, ok func(screen string) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		s := w.screen
		w.mu.Unlock()
		if ok(s) {
			return
		}
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("screen never showed %s; last screen:\n%s", what, s)
		}
	}
}

func (w *watched) waitText(t *testing.T, texts ...string) {
	t.Helper()
	w.waitFor(t, strings.Join(texts, " and "), func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

func TestProgramDrivesASimulatedRun(t *testing.T) {
	t.Parallel()
	start := makeRun(3, 4, 1, "gemma", "llama", scoring.JuryName)
	ctrl := newFakeCtrl(start)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	m := newModel(ctrl.out, ctrl, Options{}, done)
	m.c.now = func() time.Time { return t0.Add(time.Minute) }
	w := watch(m)
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(120, 30))

	// Snapshots arrive and the grid fills.
	ctrl.publish(start)
	w.waitText(t, "Inference 0/12", "basic_tool_call")
	s1 := next(start)
	set(s1, 0, 0, 0, completed(time.Second, 40))
	set(s1, 0, 1, 0, failed("regex", "no match"))
	set(s1, 0, 2, 0, status(state.Running))
	ctrl.publish(s1)
	s2 := next(s1)
	set(s2, 1, 0, 0, completed(time.Second, 40))
	set(s2, 1, 1, 0, errored("timeout", "no reply"))
	set(s2, 0, 0, 0, judged("gemma", scoring.Pass, 0.9))
	ctrl.publish(s2)
	w.waitText(t, "Inference 4/12", "PASS 0.90", "❌", "⚠️")

	// s, then y, stops the run: cells still under way say cancelled.
	tm.Type("s")
	w.waitText(t, "Stop the run?")
	tm.Type("y")
	ctrl.waitCall(t, "stop")
	w.waitText(t, "Stopped", "⊘")

	// J opens the picker; choosing llama switches the judge in view, and
	// the runner judges what llama has not judged.
	tm.Type("J")
	w.waitText(t, "Judge in view")
	tm.Type("j")
	tm.Send(keyMsg("enter"))
	ctrl.waitCall(t, "switch")
	w.waitText(t, "judge llama", "PASS 0.88")
	if got := ctrl.switched; len(got) != 1 || got[0] != "llama" {
		t.Fatalf("switched to %v, want llama", got)
	}

	// r re-judges the cell under the cursor with llama; its verdict changes.
	tm.Type("r")
	tm.Type("y")
	ctrl.waitCall(t, "rejudge")
	w.waitFor(t, "the re-judged verdict", func(s string) bool {
		return strings.Contains(s, "FAIL 0.25") && strings.Count(s, "PASS 0.88") == 1
	})
	if got := ctrl.rejudged[0]; len(got) != 1 || got[0].Test != "basic_tool_call" || got[0].Model != "qwen/qwen3-8b" || ctrl.rjJudges[0] != "llama" {
		t.Fatalf("re-judged %v with %v", got, ctrl.rjJudges)
	}

	// The run is over, so q quits at once.
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final := tm.FinalModel(t).(*watched)
	if final.run == nil || !final.run.Final || final.run.Status != state.RunStopped {
		t.Fatalf("program ended on %+v, want the stopped run's last snapshot", final.run)
	}
}

func TestProgramQuitWhileRunningAsksAndStops(t *testing.T) {
	t.Parallel()
	start := makeRun(2, 2, 1, "gemma")
	ctrl := newFakeCtrl(start)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	w := watch(newModel(ctrl.out, ctrl, Options{}, done))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(80, 20))
	ctrl.publish(start)
	w.waitText(t, "Inference 0/4")
	tm.Type("q")
	w.waitText(t, "Quit? The run is still going")
	tm.Type("n")
	w.waitFor(t, "the question gone", func(s string) bool { return !strings.Contains(s, "Quit?") })
	tm.Type("q")
	w.waitText(t, "Quit?")
	tm.Type("y")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if ctrl.stops != 1 {
		t.Fatalf("stops = %d, want 1: quitting must stop the run", ctrl.stops)
	}
}

// seen is a program option that reports each snapshot the program is about
// to apply: the event loop applies it before it takes another message, so a
// key or a cancel sent after the report comes after the snapshot.
func seen() (tea.ProgramOption, <-chan *state.BatteryRun) {
	ch := make(chan *state.BatteryRun, 16)
	return tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
		if s, ok := msg.(snapshotMsg); ok {
			select {
			case ch <- s.run:
			default:
			}
		}
		return msg
	}), ch
}

func waitSeen(t *testing.T, ch <-chan *state.BatteryRun, want *state.BatteryRun) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-timeout:
			t.Fatal("the program never took the snapshot")
		}
	}
}

func TestRunTUIReturnsTheLastSnapshot(t *testing.T) {
	t.Parallel()
	snaps := make(chan *state.BatteryRun, 1)
	in, keys := io.Pipe()
	t.Cleanup(func() { keys.Close() })
	type result struct {
		last *state.BatteryRun
		err  error
	}
	out := make(chan result, 1)
	filter, applied := seen()
	go func() {
		last, err := runTUI(context.Background(), snaps, newFakeCtrl(nil), Options{}, filter,
			tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30), tea.WithoutSignals())
		out <- result{last, err}
	}()
	final := sceneJudged()
	snaps <- final
	waitSeen(t, applied, final)
	if _, err := keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-out:
		if r.err != nil {
			t.Fatalf("RunTUI: %v", r.err)
		}
		if r.last != final {
			t.Fatalf("returned %+v, want the last snapshot drawn", r.last)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunTUI did not return after q")
	}
}

func TestRunTUIEndsWithItsContext(t *testing.T) {
	t.Parallel()
	snaps := make(chan *state.BatteryRun, 1)
	ctx, cancel := context.WithCancel(context.Background())
	in, keys := io.Pipe()
	t.Cleanup(func() { keys.Close() })
	type result struct {
		last *state.BatteryRun
		err  error
	}
	out := make(chan result, 1)
	filter, applied := seen()
	go func() {
		last, err := runTUI(ctx, snaps, nil, Options{}, filter,
			tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30), tea.WithoutSignals())
		out <- result{last, err}
	}()
	first := sceneMidInference()
	snaps <- first
	waitSeen(t, applied, first)
	cancel()
	select {
	case r := <-out:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", r.err)
		}
		if r.last != first {
			t.Fatalf("returned %+v, want the snapshot drawn", r.last)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunTUI did not return when its context was cancelled")
	}
}

// TestCtrlCExitsInterrupted types ctrl+c into a running program as a
// terminal in raw mode sends it (a byte, not a signal): the first asks, the
// second stops the run and RunTUI returns ErrInterrupted, which the caller
// turns into exit 130 as for SIGINT. Quitting with exit 1 ("stopped")
// disagreed with the README.
func TestCtrlCExitsInterrupted(t *testing.T) {
	t.Parallel()
	snaps := make(chan *state.BatteryRun, 1)
	in, keys := io.Pipe()
	t.Cleanup(func() { keys.Close() })
	type result struct {
		last *state.BatteryRun
		err  error
	}
	out := make(chan result, 1)
	// One filter (a program has one) reports the snapshots and ctrl+c it is
	// about to apply.
	applied := make(chan *state.BatteryRun, 16)
	pressed := make(chan struct{}, 4)
	filter := tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
		switch msg := msg.(type) {
		case snapshotMsg:
			applied <- msg.run
		case tea.KeyPressMsg:
			if msg.String() == "ctrl+c" {
				pressed <- struct{}{}
			}
		}
		return msg
	})
	first := sceneMidInference()
	ctrl := newFakeCtrl(first)
	go func() {
		last, err := runTUI(context.Background(), snaps, ctrl, Options{}, filter,
			tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30), tea.WithoutSignals())
		out <- result{last, err}
	}()
	snaps <- first
	waitSeen(t, applied, first)
	ctrlC := func() {
		t.Helper()
		if _, err := keys.Write([]byte{0x03}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-pressed:
		case <-time.After(10 * time.Second):
			t.Fatal("the program never read ctrl+c")
		}
	}
	ctrlC()
	// A snapshot sent after the key is applied after it: the program is
	// still there to take it, so one ctrl+c did not end it.
	second := next(first)
	snaps <- second
	waitSeen(t, applied, second)
	ctrlC()
	select {
	case r := <-out:
		if !errors.Is(r.err, ErrInterrupted) {
			t.Fatalf("RunTUI returned %v after ctrl+c twice, want ErrInterrupted", r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunTUI did not return after ctrl+c twice")
	}
	ctrl.mu.Lock()
	defer ctrl.mu.Unlock()
	if ctrl.stops != 1 {
		t.Fatalf("stops = %d, want 1: an interrupt stops the run", ctrl.stops)
	}
}
