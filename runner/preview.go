package runner

import (
	"encoding/json"
	"fmt"
	"slices"

	"pitwall/gpu/chat"
	"pitwall/internal/textutil"

	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// previewRunes is how much of an error's text a cell keeps in the live
// state: enough for a glance, so that the state (and every snapshot) grows
// with the number of cells and not with what the servers wrote. The ledger
// keeps every text whole.
const previewRunes = 120

// preview cuts s to previewRunes, and says whether it cut.
func preview(s string) (string, bool) {
	if len(s) <= previewRunes { // bytes >= runes: short enough either way
		return s, false
	}
	p := textutil.Clip(s, previewRunes)
	return p, p != s
}

// clipCell leaves in the live state what the grid shows of a finished
// cell once the ledger has the rest: its status and figures, its error (a
// preview of it) and a cut prompt, but none of its texts and checks. A run
// of 100,000 cells then keeps a reply for the few that erred, not for
// every cell; the judge, the side panel, the detail view and the exports
// read a clipped cell's texts from the ledger. An agent cell keeps its
// trajectory: the judge reads its steps from the live state, and agent
// tests are few.
func clipCell(c *state.Cell) {
	r := c.Reply
	if r == nil || len(r.Steps) > 0 {
		return
	}
	kept := state.Reply{ErrorClass: r.ErrorClass, PromptCut: r.PromptCut}
	kept.Error, _ = preview(r.Error)
	c.Clipped = c.Clipped || kept.Error != r.Error || r.Output != "" || r.Reasoning != "" ||
		len(r.ToolCalls) > 0 || r.FinishReason != "" || len(r.Checks) > 0
	switch {
	case kept.ErrorClass == "" && kept.Error == "" && kept.PromptCut == 0:
		c.Reply = nil
	case kept.ErrorClass == chat.ClassCanceled && kept.Error == "" && kept.PromptCut == 0:
		c.Reply = cancelled // shared: a published reply is never changed
	default:
		c.Reply = &kept
	}
}

// cancelled is the reply of every cell cancelled without a word, which a
// stopped run may have by the thousand.
var cancelled = &state.Reply{ErrorClass: chat.ClassCanceled}

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

// wholeReply is what the judge reads of a cell: its whole output and
// tool calls.
type wholeReply struct {
	output string
	calls  []chat.ToolCall
}

// wholeReplies reads what the judge reads of the cells jobs judge, those
// whose live state keeps a preview from the ledger in one query (not one
// a cell); the others' replies are in the live state, and missing here.
func (e *engine) wholeReplies(jobs []judgeJob) (map[cellPos]wholeReply, error) {
	var keys []ledger.CellKey
	var at []cellPos
	seen := map[cellPos]bool{}
	for _, j := range jobs {
		if c := e.table.at(j.cell); c.Clipped && !seen[j.cell] {
			seen[j.cell] = true
			keys = append(keys, ledger.CellKey{Model: c.Model, Test: c.Test, Repeat: c.Repeat})
			at = append(at, j.cell)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := e.r.led.CellsAt(e.r.id, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[cellPos]wholeReply, len(keys))
	for i, k := range keys {
		row, ok := rows[k]
		if !ok {
			return nil, fmt.Errorf("the ledger has no cell %s × %s #%d of run %s", k.Model, k.Test, k.Repeat, e.r.id)
		}
		var calls []chat.ToolCall
		if row.ToolCalls != "" {
			if err := json.Unmarshal([]byte(row.ToolCalls), &calls); err != nil {
				return nil, fmt.Errorf("the ledger's tool calls of %s × %s: %w", k.Model, k.Test, err)
			}
		}
		out[at[i]] = wholeReply{row.Output, calls}
	}
	return out, nil
}

// replyOf is what the judge reads of the cell at p: from whole (see
// wholeReplies) when its live state keeps a preview, or read alone when
// whole lacks it (a retry).
func (e *engine) replyOf(p cellPos, whole map[cellPos]wholeReply) (wholeReply, error) {
	c := e.table.at(p)
	if !c.Clipped {
		r := c.Said()
		return wholeReply{r.Output, r.ToolCalls}, nil
	}
	if r, ok := whole[p]; ok {
		return r, nil
	}
	one, err := e.wholeReplies([]judgeJob{{cell: p}})
	return one[p], err
}

// clipRows returns a run's rows read back whole from the ledger with their
// cells' texts cut to previews, as a live run keeps them; rows with nothing
// to cut are shared.
func clipRows(rows []*state.Row) []*state.Row {
	out := make([]*state.Row, len(rows))
	for i, row := range rows {
		out[i] = row
		var copied *state.Row
		for k, orig := range row.Cells {
			c := *orig // a copy: the row may be shared
			clipCell(&c)
			for _, j := range c.Judgments {
				if samples, cut := clipSamples(j.Samples); cut {
					nj := *j
					nj.Samples = samples
					state.SetJudgment(&c, &nj)
					c.Clipped = true
				}
			}
			if c.Reply == orig.Reply && c.Clipped == orig.Clipped {
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
