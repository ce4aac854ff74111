package ui

import (
	"pitwall/runner/state"

	"github.com/charmbracelet/x/ansi"
)

// The grid's row cache: a row's rendered cells are kept until its Row
// pointer (or, transposed, one of the visible tests' rows) changes, or
// something every row depends on does.

// lineGen is everything a cached row's cells depend on besides the rows.
type lineGen struct {
	judge       string
	fig         figure
	transposed  bool
	left, ncols int
	cellW       int
	colsVersion int
	wm          ansi.Method
}

type cachedLine struct {
	row      *state.Row   // the test's row (tests as rows)
	deps     []*state.Row // the visible tests' rows (transposed)
	animated bool
	frame    int
	text     string
}

// revalidate drops the cache when what every row depends on changed.
func (g *grid) revalidate() {
	gen := lineGen{g.judge, g.fig, g.transposed, g.left, g.ncols, g.cellW, g.colsVersion, g.c.wm}
	if gen != g.gen {
		g.gen = gen
		clear(g.cache)
	}
}

// cachedCells are row item's cells without the cursor, from the cache when
// they are still good.
func (g *grid) cachedCells(item int) string {
	if l := g.cache[item]; l != nil && g.valid(l, item) {
		return l.text
	}
	if len(g.cache) > 4*g.bodyH+64 {
		// Rows scrolled far away are unlikely to come back soon; keep the
		// cache about a few screens big.
		clear(g.cache)
	}
	text, animated := g.cells(item, -1)
	l := &cachedLine{text: text, animated: animated, frame: g.frame}
	if g.transposed {
		for _, t := range g.visibleCols() {
			l.deps = append(l.deps, rowAt(g.run, t))
		}
	} else {
		l.row = rowAt(g.run, item)
	}
	g.cache[item] = l
	return text
}

func (g *grid) valid(l *cachedLine, item int) bool {
	if l.animated && l.frame != g.frame {
		return false
	}
	if !g.transposed {
		return l.row == rowAt(g.run, item)
	}
	vis := g.visibleCols()
	if len(vis) != len(l.deps) {
		return false
	}
	for k, t := range vis {
		if l.deps[k] != rowAt(g.run, t) {
			return false
		}
	}
	return true
}
