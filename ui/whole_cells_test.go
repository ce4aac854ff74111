package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	tea "charm.land/bubbletea/v2"

	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/state"
)

// clipRow leaves test t's cells as a live snapshot keeps a finished cell:
// no reply, no checks.
func clipRow(run *state.BatteryRun, t int) {
	for mi := range run.Models {
		set(run, t, mi, 0, func(c *state.Cell) { c.Reply, c.Clipped = nil, true })
	}
}

// ledgerOf answers Ledger.Whole from whole, as the ledger would, and
// lists what it was asked; whole may change between reads.
type ledgerOf struct {
	mu    sync.Mutex
	whole *state.BatteryRun
	err   error
	asked []string // model names
}

func (l *ledgerOf) read(ref state.CellRef) (*state.Cell, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, ref.Model)
	if l.err != nil {
		return nil, l.err
	}
	t, m := index(l.whole, ref)
	c := *l.whole.Cell(t, m, ref.Repeat)
	return &c, nil
}

func (l *ledgerOf) took() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.asked)
}

// runWhole runs cmd, a batch or not, and gives m what it read.
func runWhole(m *model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runWhole(m, c)
		}
	case cellWholeMsg:
		m.Update(msg)
	}
}

// sideColumn is the part of each line of the side view that falls in the
// column that starts at col (the second column starts past the first's
// separator).
func sideColumn(screen string, col, width int) string {
	var sb strings.Builder
	for _, l := range strings.Split(screen, "\n") {
		r := []rune(l)
		if col < len(r) {
			sb.WriteString(string(r[col:min(col+width, len(r))]))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// Side by side reads whole the clipped cells of the columns on screen, and
// only those: a move along the models reads the column it brings in, a
// move back reads nothing, and a cell that changed since it was read (run
// again, judged again) shows the note, not what was read before, until it
// is read again.
func TestSideBySideReadsTheCellsOnScreenWhole(t *testing.T) {
	t.Parallel()
	whole := sceneSide()
	live := sceneSide()
	clipRow(live, 1)
	led := &ledgerOf{whole: whole}
	// 80 columns hold two models side by side.
	m := testModel(80, 60, Options{Ledger: ledgerFuncs{whole: led.read}}, newFakeCtrl(nil))
	show(m, live)
	cmd := press(m, "j", "v")
	got := drawn(m)
	if !strings.Contains(got, "(reading the whole reply from the") || strings.Contains(got, `"age": 36`) || strings.Contains(got, "has-name") {
		t.Fatalf("before the read, want the note and no reply or check:\n%s", got)
	}
	if len(led.took()) != 0 {
		t.Fatalf("Update read the ledger: %v", led.took())
	}
	runWhole(m, cmd)
	if want := []string{"qwen/qwen3-8b", "granite-4.0-micro"}; !slices.Equal(sorted(led.took()), sorted(want)) {
		t.Fatalf("read %v, want the two cells on screen %v", led.took(), want)
	}
	got = drawn(m)
	for _, want := range []string{`{"name": "Ada", "age": 36}`, `{"name":"Ada","age":"36"}`, "✓ is-json", "✓ has-name"} {
		if !strings.Contains(got, want) {
			t.Errorf("after the read, the side view lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "(reading the whole") {
		t.Errorf("after the read, a reading note is left:\n%s", got)
	}

	runWhole(m, press(m, "l"))
	if took := led.took(); len(took) != 3 || took[2] != "google/gemma-3-12b" {
		t.Fatalf("→ read %v, want the column it brought in (gemma-3-12b) and no other", took)
	}
	got = drawn(m)
	for _, want := range []string{"Here is the JSON you asked for:", "❌ is-json", "text before the JSON"} {
		if !strings.Contains(got, want) {
			t.Errorf("after →, the side view lacks %q:\n%s", want, got)
		}
	}
	if cmd := press(m, "h"); cmd != nil || len(led.took()) != 3 {
		t.Fatalf("← back to cells read read again: %v", led.took())
	}

	for i, tc := range []struct {
		name   string
		change func(*state.Cell)
		output string // the ledger's reply after the change
	}{
		{"judged again", judged(scoring.JuryName, scoring.Fail, 0.1), `{"name": "Ada", "age": 36}`},
		{"run again", func(c *state.Cell) { c.Attempts++ }, `{"name": "Ada", "age": 37}`},
	} {
		set(live, 1, 0, 0, tc.change)
		set(whole, 1, 0, 0, tc.change, func(c *state.Cell) { c.EditReply().Output = tc.output })
		_, cmd := m.Update(snapshotMsg{run: live, closed: true})
		first := sideColumn(drawn(m), 0, 38)
		if !strings.Contains(first, "reading the whole reply") || strings.Contains(first, "Ada") || strings.Contains(first, "has-name") {
			t.Errorf("%s: until read again, want the note and not the reply read before:\n%s", tc.name, first)
		}
		runWhole(m, cmd)
		if took := led.took(); len(took) != 4+i || took[3+i] != "qwen/qwen3-8b" {
			t.Fatalf("%s: read %v, want the changed cell (qwen3-8b) read again and no other", tc.name, took)
		}
		if got := drawn(m); !strings.Contains(got, tc.output) || strings.Contains(got, "(reading the whole") {
			t.Errorf("%s: after the read, want %q and no note:\n%s", tc.name, tc.output, got)
		}
	}
	if got := drawn(m); !strings.Contains(got, "FAIL 0.10") {
		t.Errorf("the verdict is not the live one:\n%s", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// A read that fails says so under the cell; with nothing to read the
// ledger with, the note says where the reply is.
func TestSideBySideSaysWhyAClippedCellIsNotWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts func(*ledgerOf) Options
		want []string // the note, as it wraps
	}{
		{"read failed", func(l *ledgerOf) Options {
			l.err = errors.New("ledger locked")
			return Options{Ledger: ledgerFuncs{whole: l.read}}
		}, []string{"(the whole reply could not be read:", "ledger locked)"}},
		{"no ledger", func(*ledgerOf) Options { return Options{} }, []string{"(the ledger has the whole reply:", "pitwall show or export reads it)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			live := sceneSide()
			clipRow(live, 1)
			led := &ledgerOf{whole: sceneSide()}
			m := testModel(160, 60, tc.opts(led), newFakeCtrl(nil))
			show(m, live)
			runWhole(m, press(m, "j", "v"))
			got := drawn(m)
			for _, want := range tc.want {
				if n := strings.Count(got, want); n != 4 {
					t.Errorf("want %q under each of the 4 cells, found %d:\n%s", want, n, got)
				}
			}
			if strings.Contains(got, "(reading the whole") {
				t.Errorf("a reading note is left:\n%s", got)
			}
			if tc.name != "read failed" {
				return
			}
			if cmd := press(m, "j"); cmd != nil {
				t.Fatal("a failed read is asked again while the view stays open")
			}
			// Opened again, it tries again.
			led.err = nil
			runWhole(m, press(m, "esc", "v"))
			if got := drawn(m); !strings.Contains(got, `{"name": "Ada", "age": 36}`) || strings.Contains(got, "could not be read") {
				t.Errorf("opened again after a failed read, want the reply read:\n%s", got)
			}
		})
	}
}

// The cache keeps the cells on screen and the last few others read: on a
// wide screen with more columns than it keeps otherwise, it does not read
// the same cells again and again.
func TestWholeCellsKeepTheCellsOnScreen(t *testing.T) {
	t.Parallel()
	run := makeRun(maxWholeCells+4, 1, 1)
	for mi := range run.Models {
		set(run, 0, mi, 0, completed(time.Second, 10), func(c *state.Cell) { c.Clipped = true })
	}
	var reads atomic.Int32
	c := newCommon(Options{Ledger: ledgerFuncs{whole: func(ref state.CellRef) (*state.Cell, error) {
		reads.Add(1)
		return &state.Cell{Model: ref.Model, Test: ref.Test, Reply: &state.Reply{Output: "whole"}}, nil
	}}})
	w := wholeCells{c: c}
	var all []cellPos
	for mi := range run.Models {
		all = append(all, cellPos{0, mi})
	}
	var feed func(cmd tea.Cmd)
	feed = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		switch msg := cmd().(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				feed(c)
			}
		case cellWholeMsg:
			w.take(msg)
		}
	}
	feed(w.read(run, all))
	if n := reads.Load(); n != int32(len(all)) {
		t.Fatalf("read %d cells, want %d", n, len(all))
	}
	if cmd := w.read(run, all); cmd != nil {
		t.Fatal("the cells on screen, all read, were read again")
	}
	for _, p := range all {
		if cells, note := w.cells(run, p.t, p.m); note != "" || cells[0].Said().Output != "whole" {
			t.Errorf("cell %v: note %q, output %q; want it whole", p, note, cells[0].Said().Output)
		}
	}
	// A cell that changed since is not shown as it was read, even
	// before anything asks for it again.
	set(run, 0, 0, 0, judged("j", scoring.Pass, 1))
	if cells, note := w.cells(run, 0, 0); note == "" || cells[0].Said().Output == "whole" {
		t.Errorf("a cell changed since it was read: note %q, output %q; want the note, not what was read", note, cells[0].Said().Output)
	}
	// A read that comes back after the cell changed again is not taken.
	stale := w.read(run, all[:1])
	set(run, 0, 0, 0, judged("j", scoring.Fail, 0))
	again := w.read(run, all[:1])
	feed(stale)
	if _, note := w.cells(run, 0, 0); note == "" {
		t.Error("a read of the cell as it was before its last change was taken as current")
	}
	feed(again)
	if cells, note := w.cells(run, 0, 0); note != "" || cells[0].Said().Output != "whole" {
		t.Errorf("the read of the cell as it is: note %q, output %q; want it whole", note, cells[0].Said().Output)
	}
	// Off screen, only the last maxWholeCells stay.
	feed(w.read(run, all[:1]))
	if len(w.got) != maxWholeCells || w.find(all[0]) == nil || w.find(all[len(all)-1]) == nil {
		t.Errorf("kept %d cells (the one asked for: %v), want %d with the one asked for and the newest",
			len(w.got), w.find(all[0]) != nil, maxWholeCells)
	}
}

// V compares the live run's cell, read whole, with the other run's: until
// it is read no check is said to be gone, and then the checks that changed
// are said.
func TestVersusReadsTheLiveCellWhole(t *testing.T) {
	t.Parallel()
	a, b := sceneVersus()
	whole := sceneSide()
	whole.ID = a.ID
	clipRow(a, 1)
	opts, _ := versusOptions(a, b)
	led := &ledgerOf{whole: whole}
	l := opts.Ledger.(ledgerFuncs)
	l.whole = led.read
	opts.Ledger = l
	m := testModel(120, 60, opts, newFakeCtrl(nil))
	show(m, a)
	press(m, "j", "l", "l")
	_, cmd := m.Update(press(m, "V")())
	if m.screen != screenVersus {
		t.Fatalf("V did not open:\n%s", drawn(m))
	}
	run(m, press(m, "enter"))
	got := drawn(m)
	if !strings.Contains(got, "J-ERR → PASS") || strings.Contains(got, " gone") || strings.Contains(got, " new") || strings.Contains(got, "now passes") ||
		!strings.Contains(got, "reading the whole reply") {
		t.Errorf("before the read, want the verdict's change, the note and no check's:\n%s", got)
	}
	runWhole(m, cmd)
	if took := led.took(); !slices.Equal(took, []string{"google/gemma-3-12b"}) {
		t.Fatalf("read %v, want V's cell of the run in view", took)
	}
	got = drawn(m)
	for _, want := range []string{"J-ERR → PASS · is-json now passes", "Here is the JSON you asked for:", "text before the JSON"} {
		if !strings.Contains(got, want) {
			t.Errorf("after the read, V lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "(reading the whole") {
		t.Errorf("after the read, a reading note is left:\n%s", got)
	}
}

// On a real run, whose snapshots keep no finished cell's reply, side by
// side reads each model's cell from the ledger: the replies and checks are
// on the screen, and no note is left.
func TestProgramSideBySideReadsTheLedgerWhole(t *testing.T) {
	t.Parallel()
	run, led := realRun(t, false)
	b := run.Wait(context.Background())
	var wants []string
	for mi := range b.Models {
		c := b.Cell(0, mi, 0)
		if c == nil || !c.Clipped || c.Said().Output != "" {
			t.Fatalf("cell %+v: want a clipped cell that keeps no reply", c)
		}
		whole, err := history.LoadCell(led, run.ID(), state.CellRef{Test: c.Test, Model: c.Model})
		if err != nil {
			t.Fatal(err)
		}
		out, _, _ := strings.Cut(strings.TrimSpace(whole.Said().Output), "\n")
		if out == "" || len(whole.Said().Checks) == 0 {
			t.Fatalf("the ledger's %s × %s has no reply or checks to look for: %+v", c.Model, c.Test, whole.Said())
		}
		wants = append(wants, string([]rune(out)[:min(10, len([]rune(out)))]), whole.Said().Checks[0].Name)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	var reads atomic.Int32
	opts := Options{Ledger: ledgerFuncs{whole: func(ref state.CellRef) (*state.Cell, error) {
		reads.Add(1)
		return history.LoadCell(led, run.ID(), ref)
	}}}
	w := watch(newModel(run.Snapshots(), runCtrl{run}, opts, done))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(140, 60))
	w.waitText(t, "Done")
	tm.Type("v")
	w.waitFor(t, "the replies read whole", func(s string) bool {
		for _, want := range wants {
			if !strings.Contains(s, want) {
				return false
			}
		}
		return !strings.Contains(s, "(reading the whole") && !strings.Contains(s, "(the ledger has")
	})
	if n := reads.Load(); n != int32(len(b.Models)) {
		t.Errorf("the ledger was read %d times, want once a model", n)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
