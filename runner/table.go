package runner

import "pitwall/runner/state"

// cellTable is the loop's mutable view of the grid, published as immutable
// snapshots by copy on write: a row is copied the first time it changes
// after a snapshot, so a snapshot costs one slice of row pointers rather
// than a copy of every cell. Maps and slices reachable from a published
// cell are never mutated; they are replaced.
//
// It also keeps the run's one Tally, re-counting at publish only the rows
// that changed since the last one.
type cellTable struct {
	models  int
	repeat  int
	rows    []*state.Row
	owned   []bool // row i was copied since the last snapshot and may be changed in place
	changed []bool // row i changed since it was last counted
	tallies []state.Tally
	total   state.Tally
	judge   string // whose verdicts total counts
}

func newCellTable(tests []string, models []string, repeat int) *cellTable {
	t := &cellTable{models: len(models), repeat: repeat, rows: make([]*state.Row, len(tests)),
		owned: make([]bool, len(tests)), changed: make([]bool, len(tests)), tallies: make([]state.Tally, len(tests))}
	for ti, test := range tests {
		row := &state.Row{Cells: make([]state.Cell, len(models)*repeat)}
		for mi, m := range models {
			for r := range repeat {
				row.Cells[mi*repeat+r] = state.Cell{Model: m, Test: test, Repeat: r, Status: state.Pending}
			}
		}
		t.rows[ti] = row
		t.owned[ti] = true
		t.changed[ti] = true
	}
	return t
}

// at returns the cell at (t, m, r) for reading.
func (t *cellTable) at(ti, mi, r int) *state.Cell {
	return &t.rows[ti].Cells[mi*t.repeat+r]
}

// edit returns the cell at (t, m, r) for changing, copying its row first
// when the row has been published.
func (t *cellTable) edit(ti, mi, r int) *state.Cell {
	if !t.owned[ti] {
		old := t.rows[ti]
		row := &state.Row{Cells: make([]state.Cell, len(old.Cells))}
		copy(row.Cells, old.Cells)
		t.rows[ti] = row
		t.owned[ti] = true
	}
	t.changed[ti] = true
	return &t.rows[ti].Cells[mi*t.repeat+r]
}

// restore replaces every row with published ones (a run read back).
func (t *cellTable) restore(rows []*state.Row) {
	copy(t.rows, rows)
	for i := range t.rows {
		t.owned[i], t.changed[i] = false, true
	}
}

// tally is the count of every cell for judge, re-counting what changed.
func (t *cellTable) tally(judge string) state.Tally {
	if judge != t.judge {
		t.judge, t.total = judge, state.Tally{}
		for i := range t.rows {
			t.tallies[i], t.changed[i] = state.Tally{}, true
		}
	}
	for i, row := range t.rows {
		if !t.changed[i] {
			continue
		}
		t.total.Merge(t.tallies[i], -1)
		t.tallies[i] = state.Tally{}
		t.tallies[i].AddRow(row, judge, 1)
		t.total.Merge(t.tallies[i], 1)
		t.changed[i] = false
	}
	return t.total
}

// publish returns the rows as they are now and freezes them.
func (t *cellTable) publish() []*state.Row {
	out := make([]*state.Row, len(t.rows))
	copy(out, t.rows)
	for i := range t.owned {
		t.owned[i] = false
	}
	return out
}

// each calls fn with every cell's coordinates, in battery order.
func (t *cellTable) each(fn func(ti, mi, rep int)) {
	for ti := range t.rows {
		for mi := range t.models {
			for rep := range t.repeat {
				fn(ti, mi, rep)
			}
		}
	}
}
