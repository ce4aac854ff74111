package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// hostile is text a battery or a server could send to take the terminal
// over: a right-to-left override, a first-strong isolate, a NUL and a
// colour sequence.
const hostile = "\u202e\u2066\x00\x1b[31m"

// hostileEscaped is hostile as the screen shows it.
const hostileEscaped = `\u202e\u2066\x00\x1b[31m`

// sceneHostile is sceneJudged whose first test id, first model, run name,
// run message and first cell's reply, reasoning, check and judge texts
// hold hostile.
func sceneHostile() *state.BatteryRun {
	run := sceneJudged()
	run.Name = "nightly" + hostile
	run.Tests = append([]state.TestInfo(nil), run.Tests...)
	run.Tests[0].ID = "t" + hostile + "x"
	run.Tests[0].Prompt = "Say" + hostile + "red."
	run.Models = append([]string(nil), run.Models...)
	run.Models[0] = "m" + hostile + "y"
	run.Message = "server said" + hostile + "oops"
	set(run, 0, 0, 0, func(c *state.Cell) {
		c.Model, c.Test = run.Models[0], run.Tests[0].ID
		c.EditReply().Output = "reply" + hostile + "red"
		c.EditReply().Reasoning = "think" + hostile
		j := c.Judgment("gemma")
		j.Samples = []scoring.Sample{{Reason: "because" + hostile}}
	})
	return run
}

// unsafeOnScreen is the first raw control or bidi character in s that a
// hostile text put there, or "" when there is none. ESC is looked for as
// the hostile sequence itself, since the view's own styles use ESC.
func unsafeOnScreen(s string) string {
	for _, bad := range []string{"\u202e", "\u2066", "\x00", "\x1b[31mred", "\x1b[31my", "\x1b[31mx", "\x1b[31moops"} {
		if strings.Contains(s, bad) {
			return bad
		}
	}
	return ""
}

func TestHostileTextIsShownEscapedInTheGridHeaderAndDetail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys []string
		want []string // escaped texts the screen must show
	}{
		{"hostile_grid", nil, []string{"nightly" + hostileEscaped, "server said" + hostileEscaped + "oops"}},
		{"hostile_detail", []string{"enter"}, []string{"Test t" + hostileEscaped + "x", "Model m" + hostileEscaped + "y",
			"reply" + hostileEscaped + "red", "think" + hostileEscaped, "because" + hostileEscaped, "Say" + hostileEscaped + "red."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := testModel(140, 44, Options{}, newFakeCtrl(nil))
			show(m, sceneHostile())
			press(m, tc.keys...)
			raw := m.render()
			if bad := unsafeOnScreen(raw); bad != "" {
				t.Errorf("%q reached the terminal raw:\n%s", bad, ansi.Strip(raw))
			}
			got := drawn(m)
			for _, w := range tc.want {
				if !strings.Contains(strings.ReplaceAll(got, "\n", ""), w) {
					t.Errorf("the screen does not show %q:\n%s", w, got)
				}
			}
			for i, l := range strings.Split(got, "\n") {
				if w := m.c.wm.StringWidth(l); w != 140 && strings.TrimSpace(l) != "" && strings.Contains(l, "│") {
					t.Errorf("line %d is %d wide, want the screen's 140: %q", i+1, w, l)
				}
				if w := m.c.wm.StringWidth(l); w > 140 {
					t.Errorf("line %d is %d wide, past the screen's 140: %q", i+1, w, l)
				}
			}
			golden(t, tc.name, got)
		})
	}
}

func TestThePlainGridMeasuresHostileNamesAsShown(t *testing.T) {
	t.Parallel()
	run := sceneHostile()
	sum := Summary(run, "gemma", Options{})
	var rates []int
	for _, l := range strings.Split(sum, "\n") {
		if i := strings.Index(l, "%"); i >= 0 && strings.HasPrefix(l, "  ") {
			rates = append(rates, ansi.WcWidth.StringWidth(l[:i]))
		}
	}
	if len(rates) != len(run.Models) || !equalInts(rates, slicesRepeat(rates[0], len(rates))) {
		t.Errorf("the summary's pass rates end at columns %v, want one column:\n%s", rates, sum)
	}
	for _, ascii := range []bool{false, true} {
		grid := RenderGrid(run, "gemma", ascii)
		if bad := unsafeOnScreen(grid); bad != "" || strings.Contains(grid, "\x1b") {
			t.Errorf("ascii=%v: the plain grid holds %q raw:\n%s", ascii, bad, grid)
		}
		if !strings.Contains(grid, "t"+hostileEscaped+"x") || !strings.Contains(grid, `m\u202e\u2066\x00`) {
			t.Errorf("ascii=%v: the plain grid does not show the id and the model escaped:\n%s", ascii, grid)
		}
		sep := "│"
		if ascii {
			sep = "|"
		}
		// Every line's separators stand in the same columns as the head's.
		lines := strings.Split(strings.TrimRight(grid, "\n"), "\n")
		want := sepColumns(lines[0], sep)
		for i, l := range lines[1:] {
			if got := sepColumns(l, sep); !equalInts(got, want) {
				t.Errorf("ascii=%v: line %d has separators at %v, the head at %v:\n%s", ascii, i+2, got, want, grid)
			}
		}
		if ascii {
			golden(t, "hostile_plain_ascii", grid)
		} else {
			golden(t, "hostile_plain", grid)
		}
	}
}

// sepColumns is the display columns at which sep stands in line, measured
// as headless output is (wcwidth: ⚠️ one column).
func sepColumns(line, sep string) []int {
	var cols []int
	col := 0
	for _, g := range strings.SplitAfter(line, sep) {
		if !strings.HasSuffix(g, sep) {
			break
		}
		col += ansi.WcWidth.StringWidth(g)
		cols = append(cols, col)
	}
	return cols
}

func slicesRepeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
