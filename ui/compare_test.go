package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"pitwall/judge/scoring"
	"pitwall/runner/compare"
	"pitwall/runner/state"
)

// settle runs cmd as the program would when it is a ranking, and gives the
// model what it returns, until no ranking is asked for.
func settle(m *model, cmd tea.Cmd) {
	for cmd != nil {
		msg, ok := cmd().(rankedMsg)
		if !ok {
			return
		}
		_, cmd = m.Update(msg)
	}
}

func TestCompareGolden(t *testing.T) {
	t.Parallel()
	critical := []string{"/", "s", "e", "v", ":", "c", "r", "i", "t", "enter"}
	tests := []struct {
		name string
		w, h int
		opts Options
		run  func() *state.BatteryRun
		keys []string
	}{
		// ⚠️ and ❌ in the counts, a jury's scores, three categories, two judges.
		{name: "compare", w: 120, h: 44, run: sceneSeverity, keys: []string{"c"}},
		// Too narrow for one table: the figures go to bands under it.
		{name: "compare_narrow", w: 60, h: 44, run: sceneSeverity, keys: []string{"c"}},
		{name: "compare_ascii", w: 80, h: 44, opts: Options{ASCII: true}, run: sceneSeverity, keys: []string{"c"}},
		{name: "compare_scrolled", w: 100, h: 20, run: sceneSeverity, keys: []string{"c", "j", "j", "j", "j", "j", "j"}},
		{name: "compare_live", w: 120, h: 32, run: sceneMidInference, keys: []string{"c"}},
		// Mid-run the rates are provisional ranges at every width.
		{name: "compare_80", w: 80, h: 44, run: sceneSeverity, keys: []string{"c"}},
		{name: "compare_live_60", w: 60, h: 32, run: sceneMidInference, keys: []string{"c"}},
		{name: "compare_live_80", w: 80, h: 32, run: sceneMidInference, keys: []string{"c"}},
		// The ranking is of what the filters keep: the critical tests.
		{name: "compare_filtered", w: 120, h: 32, run: sceneSeverity, keys: append(critical, "c")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(tt.w, tt.h, tt.opts, newFakeCtrl(nil))
			show(m, tt.run())
			for _, k := range tt.keys {
				settle(m, press(m, k))
			}
			got := drawn(m)
			if n := strings.Count(got, "\n") + 1; n != tt.h {
				t.Errorf("frame has %d lines, want %d", n, tt.h)
			}
			for i, l := range strings.Split(got, "\n") {
				if w := m.c.wm.StringWidth(l); w > tt.w {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, tt.w, l)
				}
				if tt.opts.ASCII {
					for _, r := range l {
						if r > 0x7e {
							t.Errorf("line %d is not ASCII (%q): %q", i+1, r, l)
							break
						}
					}
				}
			}
			golden(t, tt.name, got)
		})
	}
}

// The ranking's columns line up whatever width the terminal gives ⚠️: the
// count under it starts where the heading does, under wcwidth and
// grapheme widths alike.
func TestCompareAlignsWarnings(t *testing.T) {
	t.Parallel()
	for _, wm := range []ansi.Method{ansi.WcWidth, ansi.GraphemeWidth} {
		m := testModel(120, 44, Options{}, newFakeCtrl(nil))
		m.c.wm = wm
		show(m, sceneSeverity())
		settle(m, press(m, "c"))
		lines := strings.Split(drawn(m), "\n")
		head := -1
		for i, l := range lines {
			if strings.Contains(l, "% interval") && strings.Contains(l, "J-ERR") {
				head = i
				break
			}
		}
		if head < 0 {
			t.Fatalf("no ranking table:\n%s", strings.Join(lines, "\n"))
		}
		// Every row of the table is as wide as its heading up to the last
		// column, measured the way the terminal measures it.
		end := func(l string) int { return wm.StringWidth(l[:strings.Index(l, "J-ERR")]) }
		want := end(lines[head])
		for _, l := range lines[head+1 : head+5] {
			cut := strings.LastIndex(l, "%]") // the end of the interval column
			if cut < 0 {
				t.Fatalf("row without an interval: %q", l)
			}
			if got := wm.StringWidth(l[:cut]); got >= want {
				t.Errorf("row %q: interval ends at %d, past the heading's J-ERR at %d", l, got, want)
			}
		}
		// The ⚠️ heading takes the columns the counts under it are padded to.
		h := lines[head]
		i := strings.Index(h, "⚠️")
		if i < 0 {
			t.Fatalf("no ⚠️ heading: %q", h)
		}
		col := wm.StringWidth(h[:i]) + wm.StringWidth("⚠️")
		for _, l := range lines[head+1 : head+5] {
			// A right-aligned count ends where its heading ends.
			if c := []rune(ansiCut(wm, l, col)); len(c) == 0 || c[len(c)-1] < '0' || c[len(c)-1] > '9' {
				t.Errorf("under %v the ⚠️ count does not end at column %d: %q", wm, col, l)
			}
		}
	}
}

// ansiCut is l cut to w columns as wm measures them.
func ansiCut(wm ansi.Method, l string, w int) string { return wm.Truncate(l, w, "") }

func TestCompareRunOutcomes(t *testing.T) {
	t.Parallel()
	run := next(makeRun(2, 2, 1, "gemma", "llama", scoring.JuryName))
	set(run, 0, 0, 0, completed(time.Second, 40), judged("gemma", scoring.Pass, 0.9), judged("llama", scoring.Fail, 0.2),
		judged(scoring.JuryName, scoring.Warn, 0.55))
	set(run, 0, 1, 0, completed(time.Second, 40)) // not judged yet
	set(run, 1, 0, 0, failed("regex", "no match"))
	set(run, 1, 1, 0, errored("timeout", "no reply"))

	byCell := func(r compare.Run) map[string]compare.Cell {
		out := map[string]compare.Cell{}
		for _, c := range r.Cells {
			out[c.Test+"/"+c.Model] = c
		}
		return out
	}
	gemma := byCell(compareRun(run, "gemma", nil, nil))
	want := map[string]compare.Outcome{
		"basic_tool_call/qwen/qwen3-8b":       compare.Pass,
		"basic_tool_call/granite-4.0-micro":   compare.Unjudged, // its judge has not spoken
		"json_schema_reply/qwen/qwen3-8b":     compare.Fail,
		"json_schema_reply/granite-4.0-micro": compare.Error,
	}
	for k, o := range want {
		if got := gemma[k].Outcome; got != o {
			t.Errorf("%s under gemma: %s, want %s", k, got, o)
		}
	}
	if c := gemma["basic_tool_call/qwen/qwen3-8b"]; c.Score != 0.9 || len(c.Verdicts) != 2 || c.Verdicts[scoring.JuryName] != "" {
		t.Errorf("judged cell: score %v, verdicts %v; want gemma's score and each judge's own verdict, not the jury's", c.Score, c.Verdicts)
	}
	if got := byCell(compareRun(run, scoring.JuryName, nil, nil))["basic_tool_call/qwen/qwen3-8b"].Outcome; got != compare.Warn {
		t.Errorf("under the jury: %s, want warn", got)
	}
	// With no judge in view the checks decide: a completed cell passes, scoring 1.
	none := byCell(compareRun(run, "", nil, nil))
	if c := none["basic_tool_call/granite-4.0-micro"]; c.Outcome != compare.Pass || c.Score != 1 {
		t.Errorf("checks only: %s %v, want pass 1", c.Outcome, c.Score)
	}
	// Filters keep a part of the run.
	part := compareRun(run, "gemma", []int{1}, []int{0})
	if len(part.Cells) != 1 || part.Cells[0].Test != "json_schema_reply" || part.Cells[0].Model != "qwen/qwen3-8b" {
		t.Errorf("filtered run has %+v", part.Cells)
	}
}

// The ranking follows the snapshots while it is open, one ranking at a
// time: a snapshot that arrives meanwhile is ranked once that one is in.
func TestRankingFollowsSnapshots(t *testing.T) {
	t.Parallel()
	ctrl := newFakeCtrl(nil)
	m := testModel(120, 40, Options{}, ctrl)
	run := next(makeRun(2, 2, 1))
	set(run, 0, 0, 0, completed(time.Second, 40))
	show(m, run)
	first := press(m, "c")
	if first == nil || m.screen != screenCompare {
		t.Fatalf("c did not open the ranking and ask for it (screen %v)", m.screen)
	}
	if !strings.Contains(drawn(m), "ranking the run") {
		t.Errorf("before the first ranking the view says nothing of it:\n%s", drawn(m))
	}
	// Two snapshots while the first ranking is being worked out: neither
	// asks for another yet.
	s2 := next(run)
	set(s2, 0, 1, 0, failed("regex", "no match"))
	m.Update(snapshotMsg{run: s2, closed: true})
	if !m.rank.busy || !m.rank.stale {
		t.Fatalf("a snapshot during a ranking: busy %v, stale %v; want it kept for the next", m.rank.busy, m.rank.stale)
	}
	s3 := next(s2)
	set(s3, 1, 0, 0, completed(time.Second, 40))
	finish(s3, state.RunCompleted)
	m.Update(snapshotMsg{run: s3, closed: true})

	_, again := m.Update(first().(rankedMsg))
	if again == nil {
		t.Fatal("the ranking of an old snapshot did not ask for the newest")
	}
	if !strings.Contains(drawn(m), "1 of 4 cells decided") {
		t.Errorf("the first ranking is not shown meanwhile:\n%s", drawn(m))
	}
	settle(m, again)
	got := drawn(m)
	if !strings.Contains(got, "3 of 4 cells decided") || strings.Contains(got, "the run goes on") {
		t.Errorf("the ranking did not follow to the last snapshot:\n%s", got)
	}

	// esc closes it; snapshots no longer ask for rankings.
	press(m, "esc")
	if m.screen != screenGrid {
		t.Fatalf("esc left screen %v", m.screen)
	}
	m.Update(snapshotMsg{run: next(s3), closed: true})
	if m.rank.busy {
		t.Error("a closed ranking still asks for rankings")
	}
	// c closes it too.
	settle(m, press(m, "c"))
	press(m, "c")
	if m.screen != screenGrid {
		t.Errorf("c did not close the ranking: screen %v", m.screen)
	}
}

// c on a live run opens its ranking, which follows the snapshots; esc goes
// back to the grid.
func TestProgramComparesTheRun(t *testing.T) {
	t.Parallel()
	start := next(makeRun(3, 4, 1))
	for m := range 3 {
		set(start, 0, m, 0, completed(time.Second, 40))
	}
	set(start, 1, 1, 0, errored("timeout", "no reply"))
	ctrl := newFakeCtrl(start)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	m := newModel(ctrl.out, ctrl, Options{}, done)
	m.c.now = func() time.Time { return t0.Add(time.Minute) }
	w := watch(m)
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(120, 40))

	ctrl.publish(start)
	w.waitText(t, "Inference 4/12", "basic_tool_call")
	tm.Type("c")
	// Checks only: the three ✓ pass; ⚠️ counts as not passed.
	w.waitText(t, "Ranking", "checks only (no judge)", "4 of 12 cells decided", "the run goes on", "=1    qwen/qwen3-8b")

	s2 := next(start)
	for m := range 3 {
		set(s2, 1, m, 0, failed("regex", "no match"))
	}
	ctrl.publish(s2)
	w.waitText(t, "6 of 12 cells decided", "Speed and tokens")

	tm.Send(keyMsg("esc"))
	w.waitFor(t, "the grid again", func(s string) bool {
		return !strings.Contains(s, "Ranking") && strings.Contains(s, "pass rate")
	})
	tm.Type("q")
	tm.Type("y")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
