package ui

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"pitwall/runner/state"
)

// A snapshot keeps none of a finished cell's texts and checks
// (state.Cell.Clipped), so the views that show them beside other cells,
// side by side (v) and V, read the cells on screen whole through
// Ledger.Whole, from commands, as the detail view does for its one cell.
// They keep the last few read, never the run: a run of 100,000 cells is
// not held whole. A cell that changed since it was read (run again,
// judged again) is read again, and until then shows what the snapshot
// has and a note, never the old reply as the current one.

// maxWholeCells is how many grid cells stay read beyond those on screen:
// enough to go back and forth along the models without reading again.
const maxWholeCells = 16

// cellPos is a grid cell: a test and a model of the run in view.
type cellPos struct{ t, m int }

// wholeCells is the views' cache of grid cells read whole.
type wholeCells struct {
	c   *common      // its opts.Ledger reads the ledger; nil, nothing can
	got []*wholeCell // the least recently asked first
}

// wholeCell is one grid cell's repeats read whole.
type wholeCell struct {
	at cellPos
	// live are the repeats as the snapshot had them when asked. A
	// published cell is never changed, so a snapshot with another
	// pointer holds a cell that changed since.
	live    []*state.Cell
	shown   []*state.Cell // live with what was read; nil until read
	err     error
	reading bool
}

// cellWholeMsg carries a grid cell's repeats read whole, for the views.
type cellWholeMsg struct {
	at    cellPos
	live  []*state.Cell
	cells map[int]*state.Cell // by repeat
	err   error
}

// read asks for the grid cells at, as run has them, that keep less than
// the ledger has and are not read yet, or were read before they changed.
// It keeps them and the last few others read.
func (w *wholeCells) read(run *state.BatteryRun, at []cellPos) tea.Cmd {
	load := w.c.opts.ledger().Whole
	if !w.c.opts.hasLedger() || run == nil {
		return nil
	}
	var cmds []tea.Cmd
	for _, p := range at {
		live := repeats(run, p.t, p.m)
		if !anyClipped(live) {
			continue
		}
		e := w.find(p)
		if e == nil {
			e = &wholeCell{at: p}
			w.got = append(w.got, e)
		}
		w.touch(e)
		if slices.Equal(e.live, live) {
			continue // read, or being read, as it is
		}
		*e = wholeCell{at: p, live: slices.Clone(live), reading: true}
		cmds = append(cmds, readCells(load, p, e.live))
	}
	// Those asked for are the newest: only older ones go.
	if over := len(w.got) - max(maxWholeCells, len(at)); over > 0 {
		w.got = slices.Delete(w.got, 0, over)
	}
	return tea.Batch(cmds...)
}

// readCells reads the clipped ones of a grid cell's repeats whole.
func readCells(load func(state.CellRef) (*state.Cell, error), p cellPos, live []*state.Cell) tea.Cmd {
	var refs []state.CellRef
	for r, c := range live {
		if c.Clipped {
			refs = append(refs, state.CellRef{Test: c.Test, Model: c.Model, Repeat: r})
		}
	}
	return func() tea.Msg {
		cells, err := readRefs(load, refs)
		return cellWholeMsg{at: p, live: live, cells: cells, err: err}
	}
}

// take keeps what readCells read, unless the cell was asked for again
// since (it changed) or has left the cache.
func (w *wholeCells) take(msg cellWholeMsg) {
	e := w.find(msg.at)
	if e == nil || !slices.Equal(e.live, msg.live) {
		return
	}
	e.reading, e.err = false, msg.err
	if msg.err != nil {
		return
	}
	// Merged once here, not at every frame.
	e.shown = make([]*state.Cell, len(e.live))
	for r, c := range e.live {
		merged := withWhole(*c, msg.cells[r])
		e.shown[r] = &merged
	}
}

// cells are grid cell (t, m)'s repeats to draw, whole where they have been
// read as the snapshot has them, and a note to show under a repeat that
// is still clipped: the read under way, its error, or where the text is.
func (w *wholeCells) cells(run *state.BatteryRun, t, m int) ([]*state.Cell, string) {
	live := repeats(run, t, m)
	if !anyClipped(live) {
		return live, ""
	}
	if !w.c.opts.hasLedger() {
		return live, noteInLedger
	}
	e := w.find(cellPos{t, m})
	switch {
	case e == nil || e.reading || !slices.Equal(e.live, live):
		// Asked for by the Update that led to this frame.
		return live, "(reading the whole reply from the ledger" + w.c.glyphs.ellipsis + ")"
	case e.err != nil:
		return live, "(the whole reply could not be read: " + e.err.Error() + ")"
	}
	return e.shown, ""
}

// noteInLedger says where a clipped cell's text is when nothing here can
// read it.
const noteInLedger = "(the ledger has the whole reply: pitwall show or export reads it)"

// retry forgets the reads that failed, for a view opened again to try
// them again; until then a failed read stays failed rather than asked
// again at every frame.
func (w *wholeCells) retry() {
	w.got = slices.DeleteFunc(w.got, func(e *wholeCell) bool { return e.err != nil })
}

func (w *wholeCells) find(p cellPos) *wholeCell {
	for _, e := range w.got {
		if e.at == p {
			return e
		}
	}
	return nil
}

// touch makes e the most recently asked for.
func (w *wholeCells) touch(e *wholeCell) {
	i := slices.Index(w.got, e)
	w.got = append(slices.Delete(w.got, i, i+1), e)
}

func anyClipped(cells []*state.Cell) bool {
	return slices.ContainsFunc(cells, func(c *state.Cell) bool { return c.Clipped })
}

// readShown asks for the cells the screen shows whole: side by side's
// columns, V's cell. Update calls it after every message, so that a view
// opened, moved or given a snapshot in which a cell changed reads what it
// lacks; it costs a look at a few cells when there is nothing to read.
func (m *model) readShown() tea.Cmd {
	if m.run == nil {
		return nil
	}
	var at []cellPos
	switch m.screen {
	case screenSide:
		at = m.side.shown()
	case screenVersus:
		at = []cellPos{{m.versus.t, m.versus.m}}
	default:
		return nil
	}
	return m.wholes.read(m.run, at)
}
