package ui

import "charm.land/lipgloss/v2"

// styles are the looks of the screen. Colour only ever repeats what a glyph
// or a word already says; with NO_COLOR every style keeps its attributes
// (bold, faint, reverse) and drops its colours.
type styles struct {
	kind       [numKinds]lipgloss.Style
	cursorKind [numKinds]lipgloss.Style // the cell under the cursor, reversed

	cursorHead lipgloss.Style // the cursor's row and column headers
	title      lipgloss.Style
	section    lipgloss.Style // a heading in the detail view
	dim        lipgloss.Style
	status     lipgloss.Style
	alert      lipgloss.Style // errors and confirmations in the status line
	key        lipgloss.Style
	keyOff     lipgloss.Style // a key that cannot act now
	bar        lipgloss.Style
	barEmpty   lipgloss.Style
	selected   lipgloss.Style // the picker's cursor line
}

func newStyles(noColor bool) *styles {
	c := func(s lipgloss.Style, col string) lipgloss.Style {
		if noColor {
			return s
		}
		return s.Foreground(lipgloss.Color(col))
	}
	plain := lipgloss.NewStyle()
	s := &styles{
		cursorHead: plain.Bold(true).Underline(true),
		title:      plain.Bold(true),
		section:    c(plain.Bold(true), "6"),
		dim:        c(plain, "8"),
		status:     c(plain, "6"),
		alert:      c(plain.Bold(true), "3"),
		key:        c(plain.Bold(true), "7"),
		keyOff:     c(plain.Faint(true), "8"),
		bar:        c(plain, "6"),
		barEmpty:   c(plain, "8"),
		selected:   plain.Reverse(true),
	}
	colours := [numKinds]string{
		kindPending:    "8",
		kindQueued:     "8",
		kindLoading:    "4",
		kindRunning:    "6",
		kindJudging:    "6",
		kindOK:         "2",
		kindCancelled:  "8",
		kindPass:       "2",
		kindWarn:       "3",
		kindJudgeError: "5",
		kindErrored:    "5",
		kindFail:       "1",
		kindFailed:     "1",
	}
	for k, col := range colours {
		st := plain
		if k == int(kindPass) || k == int(kindFail) {
			st = st.Bold(true)
		}
		s.kind[k] = c(st, col)
		s.cursorKind[k] = s.kind[k].Reverse(true)
	}
	return s
}
