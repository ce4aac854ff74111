package runner

import (
	"encoding/json"
	"fmt"
	"slices"

	"pitwall/gpu/chat"
	"pitwall/internal/textutil"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// previewRunes is how much of a long text a cell keeps in the live state:
// enough for a glance, so that the state (and every snapshot) grows with
// the number of cells and not with what the models wrote. The ledger keeps
// every text whole.
const previewRunes = 120

// preview cuts s to previewRunes, and says whether it cut.
func preview(s string) (string, bool) {
	if len(s) <= previewRunes { // bytes >= runes: short enough either way
		return s, false
	}
	p := textutil.Clip(s, previewRunes)
	return p, p != s
}

// clipCell keeps a preview of a finished cell's texts, and the checks it
// failed; the ledger has them all. An agent cell keeps its trajectory: the judge reads its steps
// from the live state, and agent tests are few.
func clipCell(c *state.Cell) {
	if len(c.Steps) > 0 {
		return
	}
	var cut, any bool
	c.Output, cut = preview(c.Output)
	any = any || cut
	c.Reasoning, cut = preview(c.Reasoning)
	any = any || cut
	for i := range c.ToolCalls {
		if _, long := preview(c.ToolCalls[i].Arguments); !long {
			continue
		}
		calls := append(c.ToolCalls[:0:0], c.ToolCalls...) // shared with the result: copy
		for j := range calls {
			calls[j].Arguments, _ = preview(calls[j].Arguments)
		}
		c.ToolCalls, any = calls, true
		break
	}
	// The checks that passed are not what the screen shows of a cell
	// (its status says it); the ones that failed say why it failed.
	if n := countPassed(c.Checks); n > 0 {
		var failed []scoring.CheckResult
		for _, r := range c.Checks {
			if !r.Pass {
				failed = append(failed, r)
			}
		}
		c.Checks, any = failed, true
	}
	c.Clipped = c.Clipped || any
}

func countPassed(rs []scoring.CheckResult) int {
	n := 0
	for _, r := range rs {
		if r.Pass {
			n++
		}
	}
	return n
}

// clipSamples returns judge samples as the live state keeps them, and
// whether anything was cut: each sample's vote (pass, score, a parse
// error) stays; the judge's reply, reasoning and reason are left to the
// verdict's ledger row, which has them whole. The screen shows a verdict
// and its score; the detail view reads the rest from the ledger. A single
// sample that says no more than its judgment is not kept at all.
func clipSamples(samples []scoring.Sample) ([]scoring.Sample, bool) {
	var out []scoring.Sample
	for i, s := range samples {
		if s.Raw == "" && s.Reasoning == "" && s.Reason == "" {
			continue
		}
		if out == nil {
			out = append([]scoring.Sample(nil), samples...)
		}
		out[i].Raw, out[i].Reasoning, out[i].Reason = "", "", ""
	}
	if out == nil {
		return samples, false
	}
	if len(out) == 1 && out[0].ParseErr == "" {
		return nil, true // one vote: the judgment's verdict and score say it all
	}
	return out, true
}

// fullReply is what the judge reads of a cell: its whole output and tool
// calls, read back from the ledger when the live state keeps a preview.
func (e *engine) fullReply(c *state.Cell) (string, []chat.ToolCall, error) {
	if !c.Clipped {
		return c.Output, c.ToolCalls, nil
	}
	row, err := e.r.led.Cell(e.r.id, c.Model, c.Test, c.Repeat)
	if err != nil {
		return "", nil, err
	}
	var calls []chat.ToolCall
	if row.ToolCalls != "" {
		if err := json.Unmarshal([]byte(row.ToolCalls), &calls); err != nil {
			return "", nil, fmt.Errorf("the ledger's tool calls of %s × %s: %w", c.Model, c.Test, err)
		}
	}
	return row.Output, calls, nil
}

// clipRows returns a run's rows read back whole from the ledger with their
// cells' texts cut to previews, as a live run keeps them; rows with nothing
// to cut are shared.
func clipRows(rows []*state.Row) []*state.Row {
	out := make([]*state.Row, len(rows))
	for i, row := range rows {
		out[i] = row
		var copied *state.Row
		for k := range row.Cells {
			c := *row.Cells[k] // a copy: the row may be shared
			clipCell(&c)
			for _, j := range c.Judgments {
				if samples, cut := clipSamples(j.Samples); cut {
					nj := *j
					nj.Samples = samples
					state.SetJudgment(&c, &nj)
					c.Clipped = true
				}
			}
			if !c.Clipped || row.Cells[k].Clipped {
				continue
			}
			if copied == nil {
				copied = &state.Row{Cells: slices.Clone(row.Cells)}
				out[i] = copied
			}
			copied.Cells[k] = &c
		}
	}
	return out
}
