package ui

import (
	tea "charm.land/bubbletea/v2"

	"pitwall/runner/state"
)

// A snapshot keeps little of a finished cell's texts (state.Cell.Clipped):
// none of its reply and checks, a preview of its error. The detail view
// reads the rest from the ledger, through Ledger.Whole, when it opens on
// such a cell, and shows what the snapshot has until it has them (side by
// side and V read theirs through whole_cells.go).

// wholeMsg carries the repeats of cell (t, m) read whole.
type wholeMsg struct {
	t, m  int
	cells map[int]*state.Cell // by repeat
	err   error
}

// readWhole asks for the clipped repeats of the open cell; nil when there
// are none, or nothing to read them with.
func (d *detail) readWhole(run *state.BatteryRun) tea.Cmd {
	load := d.c.opts.ledger().Whole
	if !d.c.opts.hasLedger() || run == nil {
		return nil
	}
	var refs []state.CellRef
	for r, c := range repeats(run, d.t, d.m) {
		if c.Clipped && d.whole[r] == nil {
			refs = append(refs, state.CellRef{Test: c.Test, Model: c.Model, Repeat: r})
		}
	}
	if len(refs) == 0 {
		return nil
	}
	d.loading = true
	t, m := d.t, d.m
	return func() tea.Msg {
		cells, err := readRefs(load, refs)
		return wholeMsg{t: t, m: m, cells: cells, err: err}
	}
}

// readRefs reads cells whole, by repeat, up to the first that fails; the
// detail view and the views of whole_cells.go read theirs with it, from
// their commands.
func readRefs(load func(state.CellRef) (*state.Cell, error), refs []state.CellRef) (map[int]*state.Cell, error) {
	out := map[int]*state.Cell{}
	for _, ref := range refs {
		c, err := load(ref)
		if err != nil {
			return out, err
		}
		out[ref.Repeat] = c
	}
	return out, nil
}

// takeWhole shows what readWhole read, if the view is still on that cell.
func (d *detail) takeWhole(msg wholeMsg, run *state.BatteryRun, judge string) {
	if msg.t != d.t || msg.m != d.m {
		return
	}
	d.loading, d.wholeErr = false, msg.err
	if d.whole == nil {
		d.whole = map[int]*state.Cell{}
	}
	for r, c := range msg.cells {
		d.whole[r] = c
	}
	d.row = nil // rebuild
	d.refresh(run, judge)
}

// previewNote says, under a clipped cell, where the rest of its text is.
func (d *detail) previewNote() string {
	switch {
	case d.loading:
		return "(a preview: reading the whole text from the ledger…)"
	case d.wholeErr != nil:
		return "(a preview: the whole text could not be read: " + d.wholeErr.Error() + ")"
	case !d.c.opts.hasLedger():
		return "(a preview: the ledger has the whole text; pitwall show or export reads it)"
	}
	return ""
}

// withWhole is the live cell with the texts its preview cut taken from
// whole; verdicts that changed since whole was read keep their previews.
func withWhole(live state.Cell, whole *state.Cell) state.Cell {
	if whole == nil || !live.Clipped {
		return live
	}
	if whole.Reply != nil {
		// The live cell keeps no texts (or an error's): the ledger's
		// reply is the whole of it.
		live.Reply = whole.Reply
	}
	clipped := false
	if len(live.Judgments) > 0 {
		js := make([]*state.Judgment, 0, len(live.Judgments))
		for _, j := range live.Judgments {
			w := whole.Judgment(j.Judge)
			switch {
			case w != nil && j.Status == state.JudgmentDone && w.Verdict == j.Verdict && w.Score == j.Score:
				nj := *j
				nj.Samples = w.Samples
				j = &nj
			case j.Status == state.JudgmentDone:
				clipped = true // judged again since: its words are in the ledger, not read yet
			}
			js = append(js, j)
		}
		live.Judgments = js
	}
	live.Clipped = clipped
	return live
}
