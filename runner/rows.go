package runner

// cellTable is the runner's mutable view of the grid, published as
// immutable snapshots by copy on write: a row is copied the first time it
// changes after a snapshot, so a snapshot costs one slice of row pointers
// rather than a copy of every cell. Maps and slices reachable from a
// published cell are never mutated; they are replaced.
type cellTable struct {
	models int
	repeat int
	rows   []*Row
	owned  []bool // row i was copied since the last snapshot and may be changed in place
}

func newCellTable(tests []string, models []string, repeat int) *cellTable {
	t := &cellTable{models: len(models), repeat: repeat, rows: make([]*Row, len(tests)), owned: make([]bool, len(tests))}
	for ti, test := range tests {
		row := &Row{Cells: make([]Cell, len(models)*repeat)}
		for mi, m := range models {
			for r := 0; r < repeat; r++ {
				row.Cells[mi*repeat+r] = Cell{Model: m, Test: test, Repeat: r, Status: Pending}
			}
		}
		t.rows[ti] = row
		t.owned[ti] = true
	}
	return t
}

// at returns the cell at (t, m, r) for reading.
func (t *cellTable) at(ti, mi, r int) *Cell {
	return &t.rows[ti].Cells[mi*t.repeat+r]
}

// edit returns the cell at (t, m, r) for changing, copying its row first
// when the row has been published.
func (t *cellTable) edit(ti, mi, r int) *Cell {
	if !t.owned[ti] {
		old := t.rows[ti]
		row := &Row{Cells: make([]Cell, len(old.Cells))}
		copy(row.Cells, old.Cells)
		t.rows[ti] = row
		t.owned[ti] = true
	}
	return &t.rows[ti].Cells[mi*t.repeat+r]
}

// publish returns the rows as they are now and freezes them.
func (t *cellTable) publish() []*Row {
	out := make([]*Row, len(t.rows))
	copy(out, t.rows)
	for i := range t.owned {
		t.owned[i] = false
	}
	return out
}

// setJudgment replaces the judgment of one judge on a cell without touching
// the published map.
func setJudgment(c *Cell, j *Judgment) {
	m := make(map[string]*Judgment, len(c.Judgments)+1)
	for k, v := range c.Judgments {
		m[k] = v
	}
	m[j.Judge] = j
	c.Judgments = m
}

// dropJudgments removes the named judgments from a cell (copying the map).
func dropJudgments(c *Cell, names ...string) {
	if len(c.Judgments) == 0 {
		return
	}
	m := make(map[string]*Judgment, len(c.Judgments))
	for k, v := range c.Judgments {
		m[k] = v
	}
	for _, n := range names {
		delete(m, n)
	}
	c.Judgments = m
}
