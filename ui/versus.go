package ui

import (
	"slices"
	"strconv"
	"strings"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// VersusOptions say what RenderVersus draws.
type VersusOptions struct {
	JudgeA, JudgeB string   // the judge in view of each run ("" for checks only)
	Tests, Models  []string // keep only these (nil: all); given, a cell shows whether it changed or not
	Width          int      // columns (0: 120)
	ASCII          bool
}

// RenderVersus draws the cells two runs share, (test, model) by (test,
// model): run a's reply beside run b's, each with its verdict, checks and
// timing, and a line saying what changed (verdict, score, checks). Without
// Tests or Models it draws only the cells that changed and counts the rest:
// `pitwall show RUN --vs OTHER`.
func RenderVersus(a, b *state.BatteryRun, o VersusOptions) string {
	return renderVersus(a, b, o, ledgerCells)
}

// cellsOf gives a grid cell of a run as a reply column draws it: its
// repeats, and a note for a repeat that keeps less than the ledger has.
type cellsOf func(run *state.BatteryRun, t, m int) ([]*state.Cell, string)

// ledgerCells are a run's cells as they are: runs read from the ledger
// keep their texts whole.
func ledgerCells(run *state.BatteryRun, t, m int) ([]*state.Cell, string) {
	cells := repeats(run, t, m)
	if anyClipped(cells) {
		return cells, noteInLedger
	}
	return cells, ""
}

// renderVersus is RenderVersus with run a's cells given by cellsA: V
// draws the live run's cell read whole.
func renderVersus(a, b *state.BatteryRun, o VersusOptions, cellsA cellsOf) string {
	c := plainCommon(Options{ASCII: o.ASCII})
	width := o.Width
	if width <= 0 {
		width = 120
	}
	colW := (width - 1 - 3) / 2
	picked := len(o.Tests) > 0 || len(o.Models) > 0
	bModel := indexOf(b.Models)
	var sb strings.Builder
	sb.WriteString(c.styles.title.Render(" "+a.ID+" vs "+b.ID) + "\n")
	shared, unchanged := 0, 0
	for t, test := range a.Tests {
		if len(o.Tests) > 0 && !slices.Contains(o.Tests, test.ID) {
			continue
		}
		bt := slices.IndexFunc(b.Tests, func(x state.TestInfo) bool { return x.ID == test.ID })
		if bt < 0 {
			continue
		}
		for mi, model := range a.Models {
			bm, ok := bModel[model]
			if !ok || len(o.Models) > 0 && !slices.Contains(o.Models, model) {
				continue
			}
			ca, noteA := cellsA(a, t, mi)
			cb, noteB := ledgerCells(b, bt, bm)
			if len(ca) == 0 || len(cb) == 0 {
				continue
			}
			shared++
			// Checks not read yet are not checks gone.
			changes := versusChanges(c, ca[0], cb[0], o.JudgeA, o.JudgeB, !ca[0].Clipped && !cb[0].Clipped)
			if len(changes) == 0 && !picked {
				unchanged++
				continue
			}
			head := test.ID + " " + c.glyphs.times + " " + model + " · "
			if len(changes) == 0 {
				head += "unchanged"
			} else {
				head += strings.Join(changes, " · ")
			}
			// What changed is the news: wrapped, never cut.
			sb.WriteString("\n")
			for _, l := range strings.Split(c.wm.Wrap(head, width-1, ""), "\n") {
				sb.WriteString(" " + c.styles.section.Render(l) + "\n")
			}
			left := replyColumn(c, "run "+a.ID, ca, noteA, o.JudgeA, colW)
			right := replyColumn(c, "run "+b.ID, cb, noteB, o.JudgeB, colW)
			sep := c.styles.dim.Render(" " + c.glyphs.sep + " ")
			for l := range max(len(left), len(right)) {
				var x, y string
				if l < len(left) {
					x = left[l]
				}
				if l < len(right) {
					y = right[l]
				}
				sb.WriteString(strings.TrimRight(" "+c.fit(x, colW)+sep+y, " ") + "\n")
			}
		}
	}
	switch {
	case shared == 0:
		sb.WriteString("\n the runs share no cell (no test and model in both)\n")
	case !picked:
		sb.WriteString("\n " + plural(shared-unchanged, "cell") + " changed, " + strconv.Itoa(unchanged) + " unchanged of " +
			plural(shared, "cell") + " both runs have; --test and --model show any cell\n")
	}
	return fold(c, sb.String())
}

// versusChanges says what differs between a cell in one run and the same
// cell in another: its outcome, its score, the checks it passed, where
// both cells hold their checks.
func versusChanges(c *common, a, b *state.Cell, judgeA, judgeB string, checks bool) []string {
	var out []string
	ka, kb := repeatKind(a, judgeA), repeatKind(b, judgeB)
	if ka != kb {
		out = append(out, c.glyphs.glyph(ka, 0)+" → "+c.glyphs.glyph(kb, 0))
	}
	ja, jb := a.Judgment(judgeA), b.Judgment(judgeB)
	scored := func(j *state.Judgment) bool {
		return j != nil && j.Status == state.JudgmentDone && j.Verdict != scoring.Error
	}
	if scored(ja) && scored(jb) && ja.Score != jb.Score {
		d := jb.Score - ja.Score
		sign := "+"
		if d < 0 {
			sign = ""
		}
		out = append(out, "score "+strconv.FormatFloat(ja.Score, 'f', 2, 64)+" → "+strconv.FormatFloat(jb.Score, 'f', 2, 64)+
			" ("+sign+strconv.FormatFloat(d, 'f', 2, 64)+")")
	}
	if !checks {
		return out
	}
	pa, pb := checkPasses(a.Said().Checks), checkPasses(b.Said().Checks)
	var names []string
	for n := range pa {
		names = append(names, n)
	}
	for n := range pb {
		if _, ok := pa[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		x, inA := pa[n]
		y, inB := pb[n]
		switch {
		case inA && inB && x != y && y:
			out = append(out, n+" now passes")
		case inA && inB && x != y:
			out = append(out, n+" now fails")
		case !inA:
			out = append(out, n+" new")
		case !inB:
			out = append(out, n+" gone")
		}
	}
	return out
}

func checkPasses(rs []scoring.CheckResult) map[string]bool {
	m := make(map[string]bool, len(rs))
	for _, r := range rs {
		m[r.Name] = r.Pass
	}
	return m
}

func indexOf(names []string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i
	}
	return m
}
