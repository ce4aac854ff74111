package ui

import "strings"

// column is one column of a table: its heading and one cell per row.
type column struct {
	head  string
	cells []string
	right bool // figures align right
	max   int  // the widest it may be; 0 is as wide as its widest cell
}

// tableGap is the space between two columns.
const tableGap = 2

// table lays columns out in at most width columns. The first keys columns
// (a model's rank and name) start every band; the others follow in order,
// as many as the width holds, and those left over go to another band under
// it, so that a narrow screen shows every figure rather than cutting the
// right-hand ones off. A column too wide for a band of its own is cut.
// Widths are measured as the grid measures them (⚠️ included).
func table(c *common, cols []column, keys, width int) []string {
	if len(cols) == 0 {
		return nil
	}
	keys = min(keys, len(cols))
	widths := make([]int, len(cols))
	for i, col := range cols {
		w := c.sw(col.head)
		for _, s := range col.cells {
			w = max(w, c.sw(s))
		}
		if col.max > 0 {
			w = min(w, col.max)
		}
		widths[i] = w
	}
	keyW := 1 // the leading space
	for i := range keys {
		keyW += widths[i] + tableGap
	}
	var lines []string
	next := keys
	for {
		band := make([]int, 0, len(cols))
		for i := range keys {
			band = append(band, i)
		}
		used := keyW
		for next < len(cols) && (len(band) == keys || used+widths[next] <= width) {
			band = append(band, next)
			used += widths[next] + tableGap
			next++
		}
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, c.styles.title.Render(tableRow(c, cols, widths, band, -1)))
		for r := range cols[0].cells {
			lines = append(lines, tableRow(c, cols, widths, band, r))
		}
		if next >= len(cols) {
			break
		}
	}
	return lines
}

// tableRow is row r of the band's columns, or their headings for r < 0.
func tableRow(c *common, cols []column, widths, band []int, r int) string {
	var sb strings.Builder
	sb.WriteString(" ")
	for k, i := range band {
		s := cols[i].head
		if r >= 0 && r < len(cols[i].cells) {
			s = cols[i].cells[r]
		}
		if k > 0 {
			sb.WriteString(strings.Repeat(" ", tableGap))
		}
		if cols[i].right {
			sb.WriteString(c.fitRight(s, widths[i]))
		} else {
			sb.WriteString(c.fit(s, widths[i]))
		}
	}
	return strings.TrimRight(sb.String(), " ")
}
