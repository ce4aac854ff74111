package ui

import (
	"pitwall/internal/textutil"
	"pitwall/runner/state"
	"sort"
	"strconv"
	"strings"
)

// Grid geometry. Every cell of a frame has the same width whatever its
// glyph, so the separators line up: a column is a separator, a space and
// cellW columns. The row names take up to maxNameW and the columns up to
// maxCellW; when every column fits at that, what the screen has left
// goes to the names first and then to the columns, until each is whole.
const (
	minCellW = 10 // "FAIL 0.25", "✓ … 1/3"
	maxCellW = 24
	maxNameW = 32
	rateW    = 4 // "100%"
	// gutter (cursor mark), spaces around the rate, closing separator
	rowChrome = 4
)

// grid draws tests × models (or models × tests, transposed) with frozen row
// and column headers, pass rates under the columns and beside the rows, and
// draws only what is on screen. Rendered rows are cached by their Row
// pointer, so a frame after a snapshot re-renders the rows that changed.
type grid struct {
	c             *common
	width, height int

	run        *state.BatteryRun
	board      *board
	judge      string
	fig        figure
	transposed bool
	frame      int

	query  string
	names  nameFilter
	status statusFilter
	marks  bool // the run has critical tests: the test names make room for their mark

	tests, models  []int // visible indices, after the filters
	curRow, curCol int   // the cursor, as positions in rows() and cols()
	top, left      int   // the first visible row and column

	nameW, cellW, ncols, bodyH int
	rowNameMax                 int // widest row name on the current axis; -1 = measure again
	colNameMax                 int // widest visible column name; -1 = measure again

	// Pass counts of what the filters keep; filtered says they, not the
	// board's, are the ones to show.
	vis      sums
	filtered bool

	cache       map[int]*cachedLine
	gen         lineGen
	colsVersion int
	rendered    int // cells rendered since the grid was made; tests read it
}

func newGrid(c *common, b *board) *grid {
	return &grid{c: c, board: b, rowNameMax: -1, colNameMax: -1, cellW: minCellW, cache: map[int]*cachedLine{}}
}

// SetSize gives the grid its part of the screen.
func (g *grid) SetSize(w, h int) {
	g.width, g.height = w, h
	g.fix()
}

func (g *grid) rows() []int {
	if g.transposed {
		return g.models
	}
	return g.tests
}

func (g *grid) cols() []int {
	if g.transposed {
		return g.tests
	}
	return g.models
}

// testModel maps a row item and a column item to a test and a model.
func (g *grid) testModel(rowItem, colItem int) (t, m int) {
	if g.transposed {
		return colItem, rowItem
	}
	return rowItem, colItem
}

// rowName and colName are the grid's labels: test ids and model names,
// which come from batteries and servers, shown escaped (textutil.Terminal).
func (g *grid) rowName(i int) string {
	if g.transposed {
		return textutil.Terminal(g.run.Models[i])
	}
	return textutil.Terminal(g.testName(i))
}

func (g *grid) colName(i int) string {
	if g.transposed {
		return textutil.Terminal(g.testName(i))
	}
	return textutil.Terminal(shortModel(g.run.Models[i]))
}

// testName is test i's id, after the critical mark when the run has
// critical tests (blank for the others, so that the ids line up).
func (g *grid) testName(i int) string {
	return markedID(g.c, &g.run.Tests[i], g.marks)
}

// markedID is t's id with room for the critical mark in front when marks is
// set: the grid's test column and the plain grid share it.
func markedID(c *common, t *state.TestInfo, marks bool) string {
	switch {
	case !marks:
		return t.ID
	case critical(t):
		return c.glyphs.critical + " " + t.ID
	}
	return strings.Repeat(" ", c.sw(c.glyphs.critical)+1) + t.ID
}

func (g *grid) rowRate(i int) passCount {
	if g.transposed {
		return g.modelSum(i)
	}
	return g.testSum(i)
}

func (g *grid) colRate(i int) passCount {
	if g.transposed {
		return g.testSum(i)
	}
	return g.modelSum(i)
}

// remeasure asks fix to measure the names again.
func (g *grid) remeasure() { g.rowNameMax, g.colNameMax = -1, -1 }

// setRun takes a new snapshot whose tallies the board already holds; changed
// lists the tests whose rows changed, all says everything may have.
func (g *grid) setRun(run *state.BatteryRun, changed []int, all bool) {
	old := g.run
	g.run = run
	switch {
	case old == nil || all || len(old.Models) != len(run.Models) || len(old.Tests) != len(run.Tests):
		g.marks = anyCritical(run)
		g.remeasure()
		g.names = parseFilter(g.query, run)
		g.refilter()
	case g.status != showAll && len(changed) > 0:
		// A changed row may enter or leave the status filter.
		g.refilter()
	case g.filtered && g.anyVisible(changed):
		g.resum()
	}
	g.fix()
}

// setJudge shows judge's verdicts; the board must be re-tallied by the caller.
func (g *grid) setJudge(judge string) {
	g.judge = judge
	g.refilter()
}

// setQuery applies a name filter.
func (g *grid) setQuery(q string) {
	g.query = q
	if g.run != nil {
		g.names = parseFilter(q, g.run)
	}
	g.refilter()
}

// cycleStatus moves to the next status filter.
func (g *grid) cycleStatus() {
	g.status = (g.status + 1) % numStatusFilters
	g.refilter()
}

// transpose swaps the axes, keeping the cursor on its cell.
func (g *grid) transpose() {
	g.transposed = !g.transposed
	g.curRow, g.curCol = g.curCol, g.curRow
	g.top, g.left = g.left, g.top
	g.remeasure()
	g.colsVersion++
	g.fix()
}

// refilter rebuilds the visible lists, keeping the cursor on the same items.
func (g *grid) refilter() {
	if g.run == nil {
		return
	}
	rowItem, colItem := g.cursorItems()
	g.models = g.names.visibleModels(g.run, g.models)
	g.tests = g.names.visibleTests(g.run, g.board, g.status, g.models, g.tests)
	g.colsVersion++
	g.colNameMax = -1
	g.resum()
	g.curRow = position(g.rows(), rowItem)
	g.curCol = position(g.cols(), colItem)
	g.fix()
}

func (g *grid) cursorItems() (row, col int) {
	row, col = -1, -1
	if rs := g.rows(); g.curRow < len(rs) {
		row = rs[g.curRow]
	}
	if cs := g.cols(); g.curCol < len(cs) {
		col = cs[g.curCol]
	}
	return row, col
}

// position is where item is in the sorted list, or the nearest place.
func position(list []int, item int) int {
	if item < 0 {
		return 0
	}
	i := sort.SearchInts(list, item)
	return max(min(i, len(list)-1), 0)
}

// cursorCell is the test and model under the cursor.
func (g *grid) cursorCell() (t, m int, ok bool) {
	r, c := g.cursorItems()
	if g.run == nil || r < 0 || c < 0 {
		return 0, 0, false
	}
	t, m = g.testModel(r, c)
	return t, m, true
}

func (g *grid) move(dr, dc int) {
	g.curRow += dr
	g.curCol += dc
	g.fix()
}

func (g *grid) home()     { g.curRow = 0; g.fix() }
func (g *grid) end()      { g.curRow = len(g.rows()) - 1; g.fix() }
func (g *grid) pageDown() { g.move(max(g.bodyH, 1), 0) }
func (g *grid) pageUp()   { g.move(-max(g.bodyH, 1), 0) }

// fix lays the grid out for its size and keeps the cursor on screen.
func (g *grid) fix() {
	if g.run == nil {
		return
	}
	if g.rowNameMax < 0 {
		g.rowNameMax = 0
		n := len(g.run.Tests)
		if g.transposed {
			n = len(g.run.Models)
		}
		for i := range n {
			g.rowNameMax = max(g.rowNameMax, g.c.sw(g.rowName(i)))
		}
	}
	g.layoutColumns()
	g.bodyH = max(g.height-2, 1)

	rows, cols := g.rows(), g.cols()
	g.curRow = max(min(g.curRow, len(rows)-1), 0)
	g.curCol = max(min(g.curCol, len(cols)-1), 0)
	g.top = scrollTo(g.top, g.curRow, g.bodyH, len(rows))
	g.left = scrollTo(g.left, g.curCol, g.ncols, len(cols))
}

// layoutColumns sets the widths of the row names and of the cells, and how
// many columns are in view. At first the names take at most maxNameW (and a
// third of the screen) and the cells the widest visible column name, at
// most maxCellW. When the columns do not all fit that wide, they narrow to
// fit, never under minCellW, where a grid wider than the screen keeps as
// many in view as it can. When they fit with room to spare, the spare goes
// to the names and then to the columns, up to what shows them whole: a
// wide terminal shows long ids and model names that a narrow one cuts.
func (g *grid) layoutColumns() {
	cols := g.cols()
	if g.colNameMax < 0 {
		g.colNameMax = 0
		for _, j := range cols {
			g.colNameMax = max(g.colNameMax, g.c.sw(g.colName(j)))
		}
	}
	n := max(len(cols), 1)
	nameWant := max(g.rowNameMax, 8)
	// One column more than the name, so that it does not touch the next
	// separator.
	cellWant := max(g.colNameMax+1, minCellW)
	g.nameW = min(nameWant, maxNameW, max(g.width/3, 8))
	avail := g.width - g.nameW - rateW - rowChrome
	g.cellW = min(cellWant, maxCellW)
	if spare := avail - n*(g.cellW+2); spare > 0 {
		grow := min(nameWant-g.nameW, spare)
		g.nameW += grow
		avail -= grow
		g.cellW += min(cellWant-g.cellW, (spare-grow)/n)
	} else {
		g.cellW = max(min(g.cellW, avail/n-2), minCellW)
	}
	g.ncols = max(avail/(g.cellW+2), 1)
}

// scrollTo is the first visible position that keeps cur in a window of n
// out of total.
func scrollTo(first, cur, n, total int) int {
	if cur < first {
		first = cur
	}
	if cur >= first+n {
		first = cur - n + 1
	}
	return max(min(first, total-n), 0)
}

// position reports what part of the grid is on screen, for the status line.
func (g *grid) positionText() string {
	rows, cols := g.rows(), g.cols()
	if len(rows) == 0 || len(cols) == 0 {
		return ""
	}
	rn, cn := "tests", "models"
	if g.transposed {
		rn, cn = cn, rn
	}
	span := func(first, n, total int) string {
		last := min(first+n, total)
		return strconv.Itoa(first+1) + "–" + strconv.Itoa(last) + "/" + strconv.Itoa(total)
	}
	return rn + " " + span(g.top, g.bodyH, len(rows)) + " · " + cn + " " + span(g.left, g.ncols, len(cols))
}

// View draws the grid in at most height lines.
func (g *grid) View() string {
	if g.height <= 0 {
		return ""
	}
	var sb strings.Builder
	lines := 0
	add := func(s string) {
		if lines > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(s)
		lines++
	}
	switch {
	case g.run == nil:
		add(g.c.styles.dim.Render(" waiting for the first snapshot…"))
	case len(g.run.Tests) == 0 || len(g.run.Models) == 0:
		add(g.c.styles.dim.Render(" the run has no cells: no tests or no models"))
	case len(g.rows()) == 0 || len(g.cols()) == 0:
		add(g.headerLine())
		add(g.c.styles.dim.Render(" nothing matches the filter (/ to change it, f to cycle the status filter)"))
	default:
		g.fix()
		g.revalidate()
		add(g.headerLine())
		rows := g.rows()
		for p := g.top; p < min(len(rows), g.top+g.bodyH); p++ {
			add(g.rowLine(p))
		}
		add(g.footerLine())
	}
	return sb.String()
}

func (g *grid) visibleCols() []int {
	cols := g.cols()
	return cols[g.left:min(g.left+g.ncols, len(cols))]
}

func (g *grid) headerLine() string {
	st := g.c.styles
	label := "tests"
	if g.transposed {
		label = "models"
	}
	var sb strings.Builder
	sb.WriteString(" ")
	sb.WriteString(st.title.Render(g.c.fit(label, g.nameW)))
	sb.WriteString(" ")
	sb.WriteString(st.dim.Render(g.c.fitRight("pass", rateW)))
	sb.WriteString(" ")
	if g.run == nil {
		return sb.String()
	}
	_, curCol := g.cursorItems()
	for _, j := range g.visibleCols() {
		sb.WriteString(g.c.glyphs.sep)
		sb.WriteString(" ")
		name := g.c.fit(g.colName(j), g.cellW)
		if j == curCol {
			name = st.cursorHead.Render(name)
		} else {
			name = st.title.Render(name)
		}
		sb.WriteString(name)
	}
	sb.WriteString(g.c.glyphs.sep)
	return sb.String()
}

func (g *grid) footerLine() string {
	st := g.c.styles
	gl := g.c.glyphs
	var sb strings.Builder
	sb.WriteString(" ")
	sb.WriteString(st.dim.Render(g.c.fit("pass rate", g.nameW)))
	sb.WriteString(" ")
	sb.WriteString(g.c.fitRight(g.board.rate(g.totalSum(), gl), rateW))
	sb.WriteString(" ")
	for _, j := range g.visibleCols() {
		sb.WriteString(gl.sep)
		sb.WriteString(" ")
		sb.WriteString(g.c.fit(g.board.rate(g.colRate(j), gl), g.cellW))
	}
	sb.WriteString(gl.sep)
	return sb.String()
}

// rowLine draws the row at position p: its frozen header, then its cells.
func (g *grid) rowLine(p int) string {
	st := g.c.styles
	item := g.rows()[p]
	cursor := p == g.curRow
	var sb strings.Builder
	name := g.c.fit(g.rowName(item), g.nameW)
	if cursor {
		sb.WriteString(g.c.glyphs.cursor)
		name = st.cursorHead.Render(name)
	} else {
		sb.WriteString(" ")
	}
	sb.WriteString(name)
	sb.WriteString(" ")
	sb.WriteString(g.c.fitRight(g.board.rate(g.rowRate(item), g.c.glyphs), rateW))
	sb.WriteString(" ")
	if cursor {
		// The cursor row is drawn afresh: only it carries the highlight.
		text, _ := g.cells(item, g.curCol)
		sb.WriteString(text)
	} else {
		sb.WriteString(g.cachedCells(item))
	}
	sb.WriteString(g.c.glyphs.sep)
	return sb.String()
}

// cells draws the visible cells of a row; cursorPos is the cursor's column
// position, or -1 for none.
func (g *grid) cells(item, cursorPos int) (text string, animated bool) {
	st := g.c.styles
	var sb strings.Builder
	sb.Grow(g.ncols * (g.cellW + 18))
	for k, j := range g.visibleCols() {
		t, m := g.testModel(item, j)
		s := showCell(repeats(g.run, t, m), g.judge, g.fig, g.c.glyphs, g.frame)
		g.rendered++
		animated = animated || s.animated
		sb.WriteString(g.c.glyphs.sep)
		sb.WriteString(" ")
		body := g.c.fit(s.text, g.cellW)
		switch {
		case g.left+k == cursorPos:
			body = st.cursorKind[s.kind].Render(body)
		case !g.c.opts.NoColor:
			body = st.kind[s.kind].Render(body)
		}
		sb.WriteString(body)
	}
	return sb.String(), animated
}
