package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// help draws the footer's short help and the full key map that `?` opens.
// The footer lists the keys that can act now, as many as fit; the full key
// map keeps disabled keys in view, greyed, so that a person learns what
// exists and sees that it cannot act right now.
type help struct {
	c             *common
	width, height int
	off           int // first line shown, when the key map is taller than the screen
}

// scroll moves the full help by n lines, no further than its end.
func (h *help) scroll(n int) { h.off = min(max(h.off+n, 0), h.last()) }

// last is the offset that shows the key map's end.
func (h *help) last() int { return max(len(h.lines())-h.height, 0) }

// page is how far pgup and pgdn move: a screen, less the line that says
// there is more, so that no line is skipped.
func (h *help) page() int { return max(h.height-1, 1) }

// toBottom scrolls to the end.
func (h *help) toBottom() { h.off = h.last() }

func (h *help) toTop() { h.off = 0 }

// SetSize gives the full help its part of the screen.
func (h *help) SetSize(w, ht int) { h.width, h.height = w, ht }

// short draws a footer's enabled bindings on one line, in their order. When
// they do not fit, it leaves out whole bindings, the highest drop first (the
// last of equals), rather than cut one in the middle: "? help • q quit"
// stays at the end.
func (h *help) short(footer []footerKey) string {
	st := h.c.styles
	sep := " • "
	if h.c.opts.ASCII {
		sep = " | "
	}
	type entry struct {
		key, desc string
		width     int
		drop      int
	}
	var shown []entry
	width := 1 // the leading space
	for _, b := range footer {
		if !b.Enabled() {
			continue
		}
		hl := b.Help()
		e := entry{hl.Key, hl.Desc, h.c.sw(hl.Key + " " + hl.Desc), b.drop}
		if len(shown) > 0 {
			width += h.c.sw(sep)
		}
		width += e.width
		shown = append(shown, e)
	}
	for width > h.width {
		drop, dropRank := -1, 0
		for i, e := range shown {
			if e.drop > dropNever && e.drop >= dropRank {
				drop, dropRank = i, e.drop
			}
		}
		if drop < 0 {
			break
		}
		width -= shown[drop].width + h.c.sw(sep)
		shown = append(shown[:drop], shown[drop+1:]...)
	}
	var sb strings.Builder
	sb.WriteString(" ")
	for i, e := range shown {
		if i > 0 {
			sb.WriteString(st.dim.Render(sep))
		}
		sb.WriteString(st.key.Render(e.key) + " " + e.desc)
	}
	return h.c.cut(sb.String(), h.width)
}

// View draws the full key map, a legend of the glyphs and where logs go,
// from the scroll offset.
func (h *help) View() string {
	st, g := h.c.styles, h.c.glyphs
	lines := h.lines()
	if len(lines) > h.height {
		h.off = min(h.off, len(lines)-h.height)
		more := h.off+h.height < len(lines)
		lines = lines[h.off : h.off+h.height]
		if more {
			lines[len(lines)-1] = st.dim.Render(" " + g.ellipsis + " more below (↓/j, pgdn, G)")
		}
	} else {
		h.off = 0
	}
	for len(lines) < h.height {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// lines is the whole key map and legend, laid out for the width.
func (h *help) lines() []string {
	st := h.c.styles
	groups := h.c.keys.Grid.FullHelp()
	cols := make([][]string, len(groups))
	widths := make([]int, len(groups))
	for i, grp := range groups {
		keyW := 0
		for _, b := range grp {
			keyW = max(keyW, h.c.sw(b.Help().Key))
		}
		cols[i] = append(cols[i], st.section.Render(fullHelpTitles[i]))
		for _, b := range grp {
			hl := b.Help()
			entry := h.c.fit(hl.Key, keyW) + "  " + hl.Desc
			if b.Enabled() {
				entry = st.key.Render(h.c.fit(hl.Key, keyW)) + "  " + hl.Desc
			} else {
				entry = st.keyOff.Render(entry + " (not now)")
			}
			cols[i] = append(cols[i], entry)
		}
		for _, l := range cols[i] {
			widths[i] = max(widths[i], h.c.sw(l))
		}
	}
	var lines []string
	lines = append(lines, st.title.Render(" Keys")+st.dim.Render(" — greyed keys cannot act right now; esc or ? closes"), "")
	total := 0
	for _, w := range widths {
		total += w + 4
	}
	if total+1 <= h.width {
		lines = append(lines, sideBySide(h.c, cols, widths)...)
	} else {
		// Too narrow for columns: one group under the other.
		for _, col := range cols {
			for _, l := range col {
				lines = append(lines, " "+l)
			}
		}
	}
	lines = append(lines, "")
	g := h.c.glyphs
	// A legend is a list of items, a glyph with its meaning or a sentence;
	// lines break between items, so that a mark never ends a line that its
	// meaning starts (an item longer than a line wraps at its words).
	legend := []struct {
		title string
		items []string
	}{
		{"cells", []string{g.ok + " completed", g.failed + " a check failed", g.errored + " error", g.cancel + " cancelled",
			g.pending + " pending", g.queued + " queued", g.spinner[0] + " running", g.loading + " loading the model",
			"(rows misaligned where " + g.errored + " is? --ascii)"}},
		{"verdicts", []string{g.pass + " / " + g.fail + " / " + g.warn + " with the score", "(WARN: split samples or a jury that disagrees)",
			g.judgeError + " the judge failed", g.judging + " being judged"}},
		{"repeats", []string{g.spinner[0] + " 1/3: repeats over so far", g.fail + " 2/3: the worst outcome, and how many repeats succeeded"}},
		// Sentences are one item each: they wrap at their words.
		{"filter", []string{"/word keeps tests and models whose name has it; m:word models only, t:word tests only; " +
			"sev:critical only the tests of that severity (" + g.critical + " marks the critical ones); esc clears it; " +
			"f cycles all, failures, errors, disagreements. Pass rates are of what the filters keep"}},
		{"compare", []string{"c ranks the models on what the filters keep: pass rate with its 95% Wilson interval " +
			"(= before a rank: tied, the intervals overlap), mean score with a bootstrap interval, by category, latency, TTFT, " +
			"tok/s, tokens and the judges' agreement; it follows the run"}},
		{"figures", []string{"t cycles verdicts, latency, time to first token, tokens/s"}},
		{"side", []string{"v the cursor's test, every model's reply in columns;", "V the cursor's cell in another run of the battery, with what changed"}},
		// ctrl+c has no row above: its word is here, where there is room.
		{"quitting", []string{"q quits with the run's exit code; while the run goes it asks, then stops it (exit 1, stopped). " +
			"ctrl+c is SIGINT: exit 130; while the run goes it asks the same (ctrl+c again means yes), then stops it"}},
	}
	if h.c.opts.LogPath != "" {
		legend = append(legend, struct {
			title string
			items []string
		}{"logs", []string{h.c.opts.LogPath}})
	}
	for _, l := range legend {
		for i, part := range h.c.layItems(l.items, max(h.width-12, 20)) {
			title := ""
			if i == 0 {
				title = l.title
			}
			lines = append(lines, " "+st.section.Render(h.c.fit(title, 10))+" "+part)
		}
	}
	for i, l := range lines {
		lines[i] = h.c.cut(l, h.width)
	}
	return lines
}

// layItems lays items out in lines of at most w columns, two spaces between
// items on a line. A line breaks between items; an item wider than w wraps
// at its own spaces, and only a word wider than w is cut.
func (c *common) layItems(items []string, w int) []string {
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case line == "":
		case c.sw(line)+2+c.sw(it) <= w:
			line += "  " + it
			continue
		default:
			lines = append(lines, line)
		}
		parts := strings.Split(c.wm.Wrap(it, w, ""), "\n")
		lines = append(lines, parts[:len(parts)-1]...)
		line = parts[len(parts)-1]
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// sideBySide lays columns out next to each other.
func sideBySide(c *common, cols [][]string, widths []int) []string {
	rows := 0
	for _, col := range cols {
		rows = max(rows, len(col))
	}
	lines := make([]string, 0, rows)
	for r := range rows {
		var sb strings.Builder
		sb.WriteString(" ")
		for i, col := range cols {
			cell := ""
			if r < len(col) {
				cell = col[r]
			}
			if i < len(cols)-1 {
				cell = c.fit(cell, widths[i]+4)
			}
			sb.WriteString(cell)
		}
		lines = append(lines, strings.TrimRight(sb.String(), " "))
	}
	return lines
}

// key answers the help's own keys.
func (h *help) key(msg tea.KeyPressMsg) nav {
	k := h.c.keys.Help
	if key.Matches(msg, k.Close, k.Back) {
		return navClose
	}
	scrollKey(msg, k.scrollKeyMap, h)
	return navStay
}
