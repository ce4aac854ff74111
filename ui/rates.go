package ui

import "sort"

// sums are pass counts by test, by model and over both.
type sums struct {
	test  []passCount // by test index
	model []passCount // by model index
	total passCount
}

// testSum, modelSum and totalSum are the pass counts the grid shows: those
// of what the filters keep, or the board's when they keep everything.
func (g *grid) testSum(t int) passCount {
	if g.filtered {
		return g.vis.test[t]
	}
	return g.board.rowSum[t]
}

func (g *grid) modelSum(m int) passCount {
	if g.filtered {
		return g.vis.model[m]
	}
	return g.board.modSum[m]
}

func (g *grid) totalSum() passCount {
	if g.filtered {
		return g.vis.total
	}
	return g.board.total
}

// resum adds up the board's cells over the visible tests and models, so that
// a filtered view rates what it shows rather than the whole run. It walks
// the visible part once, when the filters or a visible row change (refilter
// walks as much), never on a frame.
func (g *grid) resum() {
	b := g.board
	g.filtered = g.run != nil && (len(g.tests) != b.tests || len(g.models) != b.models)
	if !g.filtered {
		return
	}
	g.vis.test = resize(g.vis.test, b.tests)
	g.vis.model = resize(g.vis.model, b.models)
	g.vis.total = passCount{}
	for _, t := range g.tests {
		var row passCount
		for _, m := range g.models {
			c := b.cell(t, m)
			row.add(c, 1)
			g.vis.model[m].add(c, 1)
		}
		g.vis.test[t] = row
		g.vis.total.addCount(row, 1)
	}
}

// resize returns s with n zeroed entries, reusing its array.
func resize(s []passCount, n int) []passCount {
	if cap(s) < n {
		return make([]passCount, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// anyVisible reports whether one of tests is on a visible row or column.
func (g *grid) anyVisible(tests []int) bool {
	for _, t := range tests {
		if i := sort.SearchInts(g.tests, t); i < len(g.tests) && g.tests[i] == t {
			return true
		}
	}
	return false
}
