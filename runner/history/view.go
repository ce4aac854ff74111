package history

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"pitwall/judge/scoring"
	"pitwall/runner/compare"
)

// What the report formats share: a cell's outcome, its mark, why it did not
// pass, and the grid of a run by test and model.

// outcome is a cell's outcome under its export's judge.
func outcome(c *ExportCell) compare.Outcome {
	v := ""
	if c.Verdict != nil {
		v = *c.Verdict
	}
	return compare.OutcomeOf(c.Status, v)
}

// mark is the short sign of one repeat: ✓ pass, ❌ fail, WARN, ⚠️ error
// (server or transport, as in the grid), J-ERR, ⊘ cancelled, ✓? replied but
// not judged, · not run. A judged cell carries its score.
func mark(c *ExportCell, withScore bool) string {
	s := ""
	switch outcome(c) {
	case compare.Pass:
		s = "✓"
	case compare.Fail:
		s = "❌"
	case compare.Warn:
		s = "WARN"
	case compare.Error:
		return "⚠️"
	case compare.JudgeError:
		return "J-ERR"
	default:
		switch c.Status {
		case "cancelled":
			return "⊘"
		case "completed":
			return "✓?"
		}
		return "·"
	}
	if withScore && c.Status == "completed" && c.Score != nil && len(c.Judgments) > 0 {
		s += " " + strconv.FormatFloat(*c.Score, 'f', 2, 64)
	}
	return s
}

// legend explains mark's signs.
const legend = "✓ pass · ❌ fail (judge or checks) · WARN split vote or jury disagreement · ⚠️ server or transport error · " +
	"J-ERR judge error · ⊘ cancelled · ✓? replied, not judged · · not run"

// why says in one line why a cell did not pass: its error, its failed
// checks, or what the judge said. "" for a pass.
func why(c *ExportCell) string {
	o := outcome(c)
	if o == compare.Pass {
		return ""
	}
	if c.Error != "" {
		if c.ErrorClass != "" {
			return c.ErrorClass + ": " + c.Error
		}
		return c.Error
	}
	var failed []string
	for _, r := range checksOf(c) {
		if !r.Pass {
			t := r.Name
			if r.Reason != "" {
				t += ": " + r.Reason
			}
			failed = append(failed, t)
		}
	}
	if len(failed) > 0 {
		return "check " + strings.Join(failed, "; ")
	}
	return judgeReason(c)
}

// judgeReason is what the cell's judges said, for a cell they did not pass.
func judgeReason(c *ExportCell) string {
	var parts []string
	for _, name := range sortedKeys(c.Judgments) {
		v := c.Judgments[name]
		if v.Verdict == string(scoring.Pass) {
			continue
		}
		t := name + " " + v.Verdict
		if v.Error != "" {
			t += ": " + v.Error
		} else if r := sampleReason(v.Samples); r != "" {
			t += ": " + r
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "; ")
}

func sampleReason(ss []scoring.Sample) string {
	for _, s := range ss {
		if s.Pass {
			continue
		}
		switch {
		case s.Reason != "":
			return s.Reason
		case s.ParseErr != "":
			return s.ParseErr
		}
	}
	return ""
}

func checksOf(c *ExportCell) []scoring.CheckResult {
	var rs []scoring.CheckResult
	if len(c.Checks) > 0 {
		_ = json.Unmarshal(c.Checks, &rs) // a record that does not read shows no checks
	}
	return rs
}

// grid is a run's cells by test and model, repeats in order.
type grid struct {
	x     *Export
	cells map[string]map[string][]*ExportCell // test → model → repeats
}

func gridOf(x *Export) *grid {
	g := &grid{x: x, cells: map[string]map[string][]*ExportCell{}}
	for i := range x.Cells {
		c := &x.Cells[i]
		if g.cells[c.Test] == nil {
			g.cells[c.Test] = map[string][]*ExportCell{}
		}
		g.cells[c.Test][c.Model] = append(g.cells[c.Test][c.Model], c)
	}
	return g
}

func (g *grid) at(test, model string) []*ExportCell { return g.cells[test][model] }

// rate counts the cells of a test (model "") or of a model (test "") for
// their pass rate.
func (g *grid) rate(test, model string) compare.Counts {
	var n compare.Counts
	for i := range g.x.Cells {
		c := &g.x.Cells[i]
		if (test != "" && c.Test != test) || (model != "" && c.Model != model) {
			continue
		}
		v := ""
		if c.Verdict != nil {
			v = *c.Verdict
		}
		n.Add(outcome(c), compare.ByJudge(g.x.Judge, c.Status, v))
	}
	return n
}

// category is a test's category, or compare.NoCategory.
func (x *Export) category(test string) string {
	if c := x.Categories[test]; c != "" {
		return c
	}
	return compare.NoCategory
}

// severity is a test's severity, or compare.NoCategory's dash.
func (x *Export) severity(test string) string {
	if s := x.Severities[test]; s != "" {
		return s
	}
	return compare.NoCategory
}

// hasSeverities reports whether any test of the run has a severity.
func (x *Export) hasSeverities() bool {
	for _, t := range x.Tests {
		if x.Severities[t] != "" {
			return true
		}
	}
	return false
}

func rateText(n compare.Counts) string { return n.RateText() }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// clip cuts s to n runes, with an ellipsis when it cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
