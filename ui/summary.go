package ui

import (
	"fmt"
	"pitwall/internal/textutil"
	"pitwall/runner/state"
	"strconv"
	"strings"
)

// Summary is what RunPlain prints under the final grid, and what the
// caller prints once RunTUI returns: the run and how it ended, the counts,
// the verdicts of judge, the pass rate of each model, the ledger, how to
// export and the exit code (with opts.ExitCode). judge "" scores by the
// checks alone: a completed cell passed, and there is no verdict line.
// A model reads "— (nothing decided)" where its rate has nothing to be of:
// all its repeats cancelled, or none judged by judge. It returns "" for a
// nil run.
func Summary(run *state.BatteryRun, judge string, opts Options) string {
	if run == nil {
		return ""
	}
	c := plainCommon(opts)
	var b board
	b.apply(run, judge)
	g, cnt := c.glyphs, b.counts
	n := strconv.Itoa
	var sb strings.Builder
	head := "run " + run.ID
	if run.Name != "" {
		head += " · " + run.Name
	}
	head += " · " + string(run.Status)
	if !run.Started.IsZero() && !run.Ended.IsZero() {
		head += " in " + clock(run.Ended.Sub(run.Started))
	}
	sb.WriteString(head + "\n")
	if run.Status == state.RunFailed && run.Message != "" {
		sb.WriteString("reason   " + run.Message + "\n")
	}
	fmt.Fprintf(&sb, "cells    %d %s completed · %d %s failed · %d %s error · %d %s cancelled (%d in all)\n",
		cnt.Completed, g.ok, cnt.Failed, g.failed, cnt.Errored, g.errored, cnt.Cancelled, g.cancel, totalCells(run))
	if n, more := attempts(run); more > 0 {
		// Cells and requests are not the same count: a retry, a resume or a
		// failover sends a cell again.
		were := strconv.Itoa(more) + " cells were"
		if more == 1 {
			were = "1 cell was"
		}
		fmt.Fprintf(&sb, "attempts %d inference attempts for %d cells run: %s sent more than once\n", n, cnt.Done(), were)
	}
	if cut, judged := promptsCut(run); cut+judged > 0 {
		fmt.Fprintf(&sb, "warning  prompts cut to the model's context: %d of inference, %d of judging; "+
			"those replies and verdicts are to part of their prompt (raise num_ctx)\n", cut, judged)
	}
	if judge != "" {
		fmt.Fprintf(&sb, "verdicts %d %s · %d %s · %d %s · %d %s (judge %s)\n",
			cnt.Pass, g.pass, cnt.Fail, g.fail, cnt.Warn, g.warn, cnt.JudgeError, g.judgeError, judge)
	} else {
		sb.WriteString("scoring  checks only\n")
	}
	sb.WriteString("pass rate by model\n")
	// Names are escaped before they are measured: the column is as wide
	// as what is shown.
	names := make([]string, len(run.Models))
	nameW := 0
	for i, m := range run.Models {
		names[i] = textutil.Terminal(m)
		nameW = max(nameW, c.sw(names[i]))
	}
	for i, m := range names {
		pc := b.modSum[i]
		r := b.rate(pc, g)
		counted := "(" + n(pc.pass) + "/" + n(pc.decided) + ")"
		switch {
		case r != g.dash:
		case !b.settled && pc.awaiting > 0:
			counted = "(" + n(pc.awaiting) + " awaiting)"
		default:
			// One wording whatever left the rate empty: every repeat
			// cancelled, or none judged by the judge in view.
			counted = "(nothing decided)"
		}
		sb.WriteString("  " + c.fit(m, nameW) + "  " + c.fitRight(r, rateW) + "  " + counted + "\n")
	}
	if inf, jud, ok := opts.ledger().Spend(run); ok {
		sb.WriteString(SpendLines(inf, jud, opts))
	}
	if opts.LedgerPath != "" {
		sb.WriteString("ledger   " + opts.LedgerPath + "\n")
	}
	sb.WriteString("export   pitwall export " + run.ID + " --format json\n")
	if opts.ExitCode != nil {
		sb.WriteString("exit     " + n(opts.ExitCode(run)) + "\n")
	}
	return textutil.Terminal(fold(c, sb.String()))
}

// RenderGrid draws run as plain text for judge: tests as rows, models as
// columns, every column as wide as its widest content so that separators
// line up (⚠️ included, measured by wcwidth as the screen is by default:
// common.wm), with pass rates beside the rows and under the columns.
// `pitwall show --headless` prints it.
func RenderGrid(run *state.BatteryRun, judge string, ascii bool) string {
	if run == nil {
		return ""
	}
	c := plainCommon(Options{ASCII: ascii})
	var b board
	b.apply(run, judge)
	g := c.glyphs

	// The ids and names from batteries and servers are escaped
	// (textutil.Terminal) before any width is measured: an escape is wider
	// than what it stands for, and the columns must fit what is shown.
	marks := anyCritical(run)
	ids := make([]string, len(run.Tests))
	nameW := c.sw("pass rate")
	for i := range run.Tests {
		ids[i] = textutil.Terminal(markedID(c, &run.Tests[i], marks))
		nameW = max(nameW, c.sw(ids[i]))
	}
	nameW = min(nameW, 40)
	names := make([]string, len(run.Models))
	cells := make([][]string, len(run.Tests))
	widths := make([]int, len(run.Models))
	for m, name := range run.Models {
		names[m] = textutil.Terminal(name)
		widths[m] = min(max(c.sw(names[m]), 4), 24)
	}
	for t := range run.Tests {
		cells[t] = make([]string, len(run.Models))
		for m := range run.Models {
			s := showCell(repeats(run, t, m), judge, figNone, g, 0)
			cells[t][m] = s.text
			widths[m] = max(widths[m], c.sw(s.text))
		}
	}
	line := func(name, r string, col func(m int) string) string {
		var sb strings.Builder
		sb.WriteString(c.fit(name, nameW) + " " + c.fitRight(r, rateW) + " ")
		for m := range run.Models {
			sb.WriteString(g.sep + " " + c.fit(col(m), widths[m]) + " ")
		}
		sb.WriteString(g.sep + "\n")
		return sb.String()
	}
	var sb strings.Builder
	sb.WriteString(line("tests", "pass", func(m int) string { return names[m] }))
	for t := range run.Tests {
		sb.WriteString(line(ids[t], b.rate(b.rowSum[t], g), func(m int) string { return cells[t][m] }))
	}
	sb.WriteString(line("pass rate", b.rate(b.total, g), func(m int) string { return b.rate(b.modSum[m], g) }))
	if ascii {
		return asciiFold.Replace(sb.String())
	}
	return sb.String()
}

// promptsCut counts the cells whose prompt the server cut, and the judge
// requests.
func promptsCut(run *state.BatteryRun) (cells, judge int) {
	for _, r := range run.Rows {
		if r == nil {
			continue
		}
		for _, c := range r.Cells {
			if c.Said().PromptCut > 0 {
				cells++
			}
		}
	}
	return cells, run.JudgePromptsCut
}

// attempts sums the inference attempts of the cells that ran, and counts
// the cells sent more than once.
func attempts(run *state.BatteryRun) (n, more int) {
	for _, r := range run.Rows {
		if r == nil {
			continue
		}
		for _, c := range r.Cells {
			n += c.Attempts
			// An agent cell's steps are a request each: only attempts
			// beyond them were a cell sent again.
			if c.Attempts > max(1, len(c.Said().Steps)) {
				more++
			}
		}
	}
	return n, more
}
