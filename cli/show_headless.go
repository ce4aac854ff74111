package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"pitwall/runner/compare"
	"pitwall/runner/history"
	"pitwall/runner/state"
)

// printNotPassed lists, after `show --headless`'s summary, each test with a
// cell that did not pass (as --fail-on counts it: FAIL, ⚠️, J-ERR, not
// judged or cancelled, and WARN under strict), most severe first, with its
// severity and category when the battery gives any, and then the battery's
// warnings: what a CI log needs to say which failures matter.
func printNotPassed(w io.Writer, b *state.BatteryRun, rec history.Record, strict bool) {
	type line struct {
		rank  int
		test  int
		cells []string
	}
	rep := max(b.Repeat, 1)
	var lines []line
	sevs, cats := false, false
	for ti, t := range b.Tests {
		sevs, cats = sevs || t.Severity != "", cats || t.Category != ""
		if ti >= len(b.Rows) {
			continue
		}
		var bad []string
		for mi, m := range b.Models {
			var outs []string
			for r := range rep {
				i := mi*rep + r
				if i >= len(b.Rows[ti].Cells) {
					continue
				}
				c := b.Rows[ti].Cells[i]
				o := cellOutcome(b, c)
				if o == compare.Pass || (o == compare.Warn && !strict) {
					continue
				}
				outs = append(outs, outcomeWord(o, c))
			}
			if len(outs) > 0 {
				bad = append(bad, m+" "+strings.Join(outs, ","))
			}
		}
		if len(bad) > 0 {
			lines = append(lines, line{rank: severityRank[t.Severity], test: ti, cells: bad})
		}
	}
	if len(lines) > 0 {
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].rank > lines[j].rank })
		head := "not passed, by test"
		if sevs {
			head += ", most severe first"
		}
		fmt.Fprintln(w, head)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, l := range lines {
			t := b.Tests[l.test]
			cols := []string{""}
			if sevs {
				cols = append(cols, orDash(t.Severity))
			}
			cols = append(cols, t.ID)
			if cats {
				cols = append(cols, orDash(t.Category))
			}
			fmt.Fprintln(tw, strings.Join(append(cols, strings.Join(l.cells, " · ")), "\t"))
		}
		tw.Flush()
	}
	if len(rec.Warnings) > 0 {
		fmt.Fprintln(w, "battery warnings: what the battery asked for that pitwall loaded but did not act on")
		for _, warn := range rec.Warnings {
			fmt.Fprintln(w, "  "+warn)
		}
	}
}

// outcomeWord names a cell's outcome as the summary's counts do.
func outcomeWord(o compare.Outcome, c *state.Cell) string {
	switch o {
	case compare.Fail:
		return "FAIL"
	case compare.Warn:
		return "WARN"
	case compare.Error:
		return "ERR"
	case compare.JudgeError:
		return "J-ERR"
	}
	if c.Status == state.Completed {
		return "not judged"
	}
	return string(c.Status)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
