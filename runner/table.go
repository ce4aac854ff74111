package runner

import (
	"slices"

	"pitwall/runner/state"
)

// cellTable is the loop's mutable view of the grid, published as immutable
// snapshots by copy on write: a row is copied the first time it changes
// after a snapshot, so a snapshot costs one slice of row pointers rather
// than a copy of every cell. Maps and slices reachable from a published
// cell are never mutated; they are replaced.
//
// It also keeps the run's one Tally, counting again at publish only the
// cells that changed since the last count: a cell's old self is taken out
// of the count when it is first edited, its new self added at the count.
// Re-counting whole rows made a judged cell cost a row of cells (100 in a
// large run) once judging spread over many rows.
type cellTable struct {
	models int
	repeat int
	width  int // cells per row
	rows   []*state.Row
	total  state.Tally
	judge  string // whose verdicts total counts
	// counted says total counts every cell for judge, but for those in
	// dirty (by test*width + index), edited since the count numbered
	// tallyGen and taken out of total (dirtyGen marks them).
	counted  bool
	tallyGen uint32
	dirtyGen []uint32
	dirty    []int
	// gen is the snapshot being made; a row (rowGen) or a cell (cellGen,
	// by test*width + index) of that generation was copied since the last
	// snapshot and may be changed in place.
	gen     uint32
	rowGen  []uint32
	cellGen []uint32
}

func newCellTable(tests []string, models []string, repeat int) *cellTable {
	width := len(models) * repeat
	t := &cellTable{models: len(models), repeat: repeat, width: width, rows: make([]*state.Row, len(tests)),
		tallyGen: 1, dirtyGen: make([]uint32, len(tests)*width),
		gen: 1, rowGen: make([]uint32, len(tests)), cellGen: make([]uint32, len(tests)*width)}
	for ti, test := range tests {
		cells := make([]state.Cell, width)
		for mi, m := range models {
			for r := range repeat {
				cells[mi*repeat+r] = state.Cell{Model: m, Test: test, Repeat: r, Status: state.Pending}
			}
		}
		t.rows[ti] = state.NewRow(cells)
		t.rowGen[ti] = t.gen
	}
	for i := range t.cellGen {
		t.cellGen[i] = t.gen
	}
	return t
}

// cellPos is where a cell sits in the table: its test's row, its model and
// its repeat. It is the engine's one name for a cell (an attempt's, a map's
// key, a queue's entry); int32 keeps a queue of every cell of a run small.
// state.CellRef names the same cell by test ID and model outside the engine.
type cellPos struct{ test, model, rep int32 }

// posOf is the cell of test ti, model mi, repeat rep.
func posOf(ti, mi, rep int) cellPos { return cellPos{int32(ti), int32(mi), int32(rep)} }

// index is p's place in its row.
func (t *cellTable) index(p cellPos) int { return int(p.model)*t.repeat + int(p.rep) }

// at returns the cell at p for reading.
func (t *cellTable) at(p cellPos) *state.Cell {
	return t.rows[p.test].Cells[t.index(p)]
}

// edit returns the cell at p for changing, copying first its row's
// pointers and then the cell when a snapshot has them.
func (t *cellTable) edit(p cellPos) *state.Cell {
	ti, i := int(p.test), t.index(p)
	if t.rowGen[ti] != t.gen {
		t.rows[ti] = &state.Row{Cells: slices.Clone(t.rows[ti].Cells)}
		t.rowGen[ti] = t.gen
	}
	row := t.rows[ti]
	k := ti*t.width + i
	if t.counted && t.dirtyGen[k] != t.tallyGen {
		// Not changed yet: the count has it as it is.
		t.total.Add(row.Cells[i], t.judge, -1)
		t.dirtyGen[k] = t.tallyGen
		t.dirty = append(t.dirty, k)
	}
	if t.cellGen[k] != t.gen {
		c := *row.Cells[i]
		row.Cells[i] = &c
		t.cellGen[k] = t.gen
	}
	return row.Cells[i]
}

// restore replaces every row with published ones (a run read back).
func (t *cellTable) restore(rows []*state.Row) {
	copy(t.rows, rows)
	t.gen++ // nothing restored may be changed in place
	t.counted = false
}

// tally is the count of every cell for judge, counting again only the
// cells edited since the last count.
func (t *cellTable) tally(judge string) state.Tally {
	if !t.counted || judge != t.judge {
		t.judge, t.total = judge, state.Tally{}
		for _, row := range t.rows {
			t.total.AddRow(row, judge, 1)
		}
		t.counted = true
	} else {
		for _, k := range t.dirty {
			t.total.Add(t.rows[k/t.width].Cells[k%t.width], judge, 1)
		}
	}
	t.dirty = t.dirty[:0]
	t.tallyGen++
	return t.total
}

// publish returns the rows as they are now and freezes them, cells and
// all: the next change of any copies it first.
func (t *cellTable) publish() []*state.Row {
	out := make([]*state.Row, len(t.rows))
	copy(out, t.rows)
	t.gen++
	return out
}

// each calls fn with every cell's position, in battery order.
func (t *cellTable) each(fn func(p cellPos)) {
	for ti := range t.rows {
		for mi := range t.models {
			for rep := range t.repeat {
				fn(posOf(ti, mi, rep))
			}
		}
	}
}
