package ui

import (
	"pitwall/runner/state"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
)

// gridLines are the grid's lines on screen: column headers, rows, pass rates.
func gridLines(m *model) []string {
	lines := strings.Split(ansi.Strip(m.render()), "\n")
	var out []string
	for _, l := range lines[headerH:] {
		if !strings.Contains(l, m.c.glyphs.sep) {
			break
		}
		out = append(out, l)
	}
	return out
}

// separators are the display columns at which sep occurs in line.
func separators(line, sep string, wm ansi.Method) []int {
	var cols []int
	pos := 0
	parts := strings.Split(line, sep)
	for i, p := range parts[:len(parts)-1] {
		pos += wm.StringWidth(p)
		cols = append(cols, pos)
		if i < len(parts)-1 {
			pos += wm.StringWidth(sep)
		}
	}
	return cols
}

func TestGridColumnsLineUp(t *testing.T) {
	t.Parallel()
	methods := []struct {
		name string
		wm   ansi.Method
	}{{"grapheme", ansi.GraphemeWidth}, {"wcwidth", ansi.WcWidth}}
	scenes := []struct {
		name string
		run  func() *state.BatteryRun
	}{{"warnings", sceneWarnings}, {"judged", sceneJudged}, {"repeats", sceneRepeats}, {"mid", sceneMidInference}}
	views := []struct {
		name string
		keys []string
	}{{"plain", nil}, {"scrolled", []string{"l", "l", "l", "l", "l", "l", "l", "l", "j", "j"}}, {"transposed", []string{"x"}}, {"figures", []string{"t"}}}
	// At 160 columns the cells widen to their names; at 90 they do not;
	// at 220 the names take what is left.
	for _, width := range []int{90, 160, 220} {
		for _, wm := range methods {
			for _, ascii := range []bool{false, true} {
				for _, sc := range scenes {
					for _, v := range views {
						name := strconv.Itoa(width) + "/" + wm.name + "/" + sc.name + "/" + v.name
						if ascii {
							name += "/ascii"
						}
						t.Run(name, func(t *testing.T) {
							m := testModel(width, 24, Options{ASCII: ascii}, nil)
							m.c.wm = wm.wm
							show(m, sc.run())
							press(m, v.keys...)
							lines := gridLines(m)
							if len(lines) < 3 {
								t.Fatalf("no grid on screen:\n%s", ansi.Strip(m.render()))
							}
							width := wm.wm.StringWidth(lines[0])
							seps := separators(lines[0], m.c.glyphs.sep, wm.wm)
							for i, l := range lines {
								if w := wm.wm.StringWidth(l); w != width {
									t.Errorf("line %d is %d wide, line 0 is %d:\n%s\n%s", i, w, width, lines[0], l)
								}
								if s := separators(l, m.c.glyphs.sep, wm.wm); !equalInts(s, seps) {
									t.Errorf("line %d has separators at %v, line 0 at %v:\n%s\n%s", i, s, seps, lines[0], l)
								}
							}
						})
					}
				}
			}
		}
	}
}

func equalInts(a, b []int) bool {
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

func TestRenderGridColumnsLineUp(t *testing.T) {
	t.Parallel()
	for _, ascii := range []bool{false, true} {
		for _, sc := range []func() *state.BatteryRun{sceneWarnings, sceneJudged, sceneRepeats} {
			run := sc()
			out := strings.TrimSuffix(RenderGrid(run, defaultJudge(run), ascii), "\n")
			lines := strings.Split(out, "\n")
			if len(lines) != len(run.Tests)+2 {
				t.Fatalf("%d lines for %d tests", len(lines), len(run.Tests))
			}
			sep := glyphsFor(ascii).sep
			// Headless lines are measured as the screen is by default.
			width, seps := ansi.WcWidth.StringWidth(lines[0]), separators(lines[0], sep, ansi.WcWidth)
			if len(seps) != len(run.Models)+1 {
				t.Fatalf("%d separators for %d models", len(seps), len(run.Models))
			}
			for i, l := range lines {
				if w := ansi.WcWidth.StringWidth(l); w != width {
					t.Errorf("line %d is %d wide, want %d:\n%s", i, w, width, out)
				}
				if s := separators(l, sep, ansi.WcWidth); !equalInts(s, seps) {
					t.Errorf("line %d separators at %v, want %v:\n%s", i, s, seps, out)
				}
			}
		}
	}
}

func TestFrameRendersWhatIsOnScreen(t *testing.T) {
	t.Parallel()
	small := testModel(120, 40, Options{}, nil)
	show(small, sceneBig(10, 100))
	small.render()
	big := testModel(120, 40, Options{}, nil)
	snap := sceneBig(100, 1000)
	show(big, snap)
	big.render()
	if big.grid.rendered != small.grid.rendered {
		t.Fatalf("first frame rendered %d cells of a 100×1000 grid and %d of a 10×100 one; a frame should cost the screen, not the grid",
			big.grid.rendered, small.grid.rendered)
	}
	visible := big.grid.bodyH * big.grid.ncols
	if big.grid.rendered > visible+big.grid.ncols {
		t.Fatalf("first frame rendered %d cells, more than the %d on screen", big.grid.rendered, visible)
	}

	step := func(name string, change func(), want int) {
		t.Helper()
		before := big.grid.rendered
		change()
		big.render()
		if got := big.grid.rendered - before; got != want {
			t.Errorf("%s: rendered %d cells, want %d", name, got, want)
		}
	}
	nc := big.grid.ncols
	// The cursor row is drawn afresh each frame; every other row comes from
	// the cache unless its Row changed.
	step("unchanged frame", func() {}, nc)
	step("a visible row changed", func() {
		n := next(snap)
		set(n, 5, 0, 0, status(state.Cancelled))
		snap = n
		show(big, n)
	}, 2*nc)
	step("a row off screen changed", func() {
		n := next(snap)
		set(n, 900, 0, 0, status(state.Cancelled))
		snap = n
		show(big, n)
	}, nc)
	step("the cursor moved one row", func() { press(big, "j") }, 2*nc)
}

func TestSpinnerRedrawsOnlyAnimatedRows(t *testing.T) {
	t.Parallel()
	m := testModel(120, 40, Options{}, nil)
	run := next(makeRun(4, 30, 1))
	set(run, 10, 1, 0, status(state.Running))
	set(run, 20, 2, 0, status(state.Running))
	show(m, run)
	m.render()
	before := m.grid.rendered
	m.Update(tickMsg(t0))
	m.render()
	// Two spinning rows and the cursor row.
	if got, want := m.grid.rendered-before, 3*len(m.grid.visibleCols()); got != want {
		t.Fatalf("a tick rendered %d cells, want %d", got, want)
	}
}

func TestFitMatchesAnsiTruncate(t *testing.T) {
	t.Parallel()
	for _, ascii := range []bool{false, true} {
		c := newCommon(Options{ASCII: ascii})
		for _, wm := range []ansi.Method{ansi.GraphemeWidth, ansi.WcWidth} {
			c.wm = wm
			for _, s := range []string{"", "a", "summarise_long_document", "qwen/qwen3-8b", "⚠️ error", "❌ 2/3", "日本語のテスト名"} {
				for w := 1; w < 14; w++ {
					got := c.fit(s, w)
					want := s
					if wm.StringWidth(s) > w {
						want = wm.Truncate(s, w, c.glyphs.ellipsis)
					}
					want += strings.Repeat(" ", max(w-wm.StringWidth(want), 0))
					if got != want {
						t.Errorf("fit(%q, %d) = %q, want %q", s, w, got, want)
					}
				}
			}
		}
	}
}

func TestColumnsWidenToTheirNames(t *testing.T) {
	t.Parallel()
	long := func() *state.BatteryRun {
		run := sceneMidInference()
		run.Models[3] = "org/a-model-whose-name-goes-on-and-on-and-on"
		return run
	}
	tests := []struct {
		name     string
		w        int
		run      func() *state.BatteryRun
		wantCols []string
		wantW    int
	}{
		{name: "room for every name", w: 160, run: sceneMidInference,
			wantCols: []string{"qwen3-8b", "granite-4.0-micro", "gemma-3-12b", "llama-3.1-8b-instruct"}, wantW: 22},
		{name: "room for most of them", w: 120, run: sceneMidInference,
			wantCols: []string{"qwen3-8b", "granite-4.0-micro", "gemma-3-12b", "llama-3.1-8b-inst…"}, wantW: 18},
		{name: "a long name stops at the most", w: 144, run: long,
			wantCols: []string{"qwen3-8b", "granite-4.0-micro", "gemma-3-12b", "a-model-whose-name-goes…"}, wantW: maxCellW},
		// With the test ids whole (38), what is left widens the columns.
		{name: "a wide screen gives it more", w: 200, run: long,
			wantCols: []string{"qwen3-8b", "granite-4.0-micro", "gemma-3-12b", "a-model-whose-name-goes-on-and-on-a…"}, wantW: 36},
		{name: "too many columns to widen", w: 120, run: sceneWarnings, wantW: minCellW},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(tt.w, 24, Options{}, nil)
			show(m, tt.run())
			_, cols := gridAxes(m)
			if tt.wantCols != nil && strings.Join(cols, ",") != strings.Join(tt.wantCols, ",") {
				t.Errorf("columns = %q, want %q\n%s", cols, tt.wantCols, drawn(m))
			}
			if m.grid.cellW != tt.wantW {
				t.Errorf("cells are %d wide, want %d", m.grid.cellW, tt.wantW)
			}
			if l := gridLines(m)[0]; m.c.wm.StringWidth(l) > tt.w {
				t.Errorf("grid is %d wide on a %d-column screen", m.c.wm.StringWidth(l), tt.w)
			}
		})
	}
}

// TestWarningLinesUpUnderTheTerminalsRule draws a run with ⚠️ cells in the
// grid and as headless grid lines. With no word from the terminal, both
// line up under wcwidth (⚠️ one column), the one measure they share; once
// the terminal reports mode 2027, the grid lines up under grapheme widths
// (⚠️ two), as bubbletea's renderer then lays it out. Under the other
// measure the ⚠️ rows must not line up, or the run would not tell the rules
// apart.
func TestWarningLinesUpUnderTheTerminalsRule(t *testing.T) {
	t.Parallel()
	headless := func(run *state.BatteryRun) []string {
		return strings.Split(strings.TrimSuffix(RenderGrid(run, defaultJudge(run), false), "\n"), "\n")
	}
	grid := func(reports ...tea.Msg) func(*state.BatteryRun) []string {
		return func(run *state.BatteryRun) []string {
			m := newModel(nil, nil, Options{}, nil)
			m.c.now = func() time.Time { return t0.Add(83 * time.Second) }
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 24})
			show(m, run)
			m.render()
			// A report after the first frame must re-pad what is cached.
			for _, r := range reports {
				m.Update(r)
			}
			return gridLines(m)
		}
	}
	set := tea.ModeReportMsg{Mode: ansi.ModeUnicodeCore, Value: ansi.ModeSet}
	tests := []struct {
		name        string
		lines       func(*state.BatteryRun) []string
		want, other ansi.Method
	}{
		{"grid, no report", grid(), ansi.WcWidth, ansi.GraphemeWidth},
		{"headless", headless, ansi.WcWidth, ansi.GraphemeWidth},
		{"grid, mode 2027 set", grid(set), ansi.GraphemeWidth, ansi.WcWidth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := tt.lines(sceneWarnings())
			warned, off := 0, 0
			seps := separators(lines[0], "│", tt.want)
			other := separators(lines[0], "│", tt.other)
			for i, l := range lines {
				if strings.Contains(l, "⚠️") {
					warned++
					if !strings.Contains(l, "⚠️ ") {
						t.Errorf("line %d: ⚠️ has no column of its own after it:\n%s", i, l)
					}
				}
				if s := separators(l, "│", tt.want); !equalInts(s, seps) {
					t.Errorf("line %d: separators at %v, the header's at %v:\n%s\n%s", i, s, seps, lines[0], l)
				}
				if !equalInts(separators(l, "│", tt.other), other) {
					off++
				}
			}
			if warned == 0 {
				t.Fatalf("no ⚠️ row to line up:\n%s", strings.Join(lines, "\n"))
			}
			if off == 0 {
				t.Errorf("the ⚠️ rows line up under %v too; the measure makes no difference:\n%s", tt.other, strings.Join(lines, "\n"))
			}
		})
	}
}
