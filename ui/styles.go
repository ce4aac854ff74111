package ui

import "github.com/charmbracelet/x/ansi"

// paint is a text style reduced to its SGR sequence, worked out once: the
// grid paints hundreds of cells a frame, and a lipgloss Render per cell cost
// more than the rest of the frame together.
type paint struct{ on string }

func newPaint(s ansi.Style) paint {
	if len(s) == 0 {
		return paint{}
	}
	return paint{on: s.String()}
}

// Render wraps s in the style.
func (p paint) Render(s string) string {
	if p.on == "" || s == "" {
		return s
	}
	return p.on + s + ansi.ResetStyle
}

// styles are the looks of the screen. Colour only ever repeats what a glyph
// or a word already says; with NO_COLOR every style keeps its attributes
// (bold, faint, reverse, underline) and drops its colours.
type styles struct {
	kind       [numKinds]paint
	cursorKind [numKinds]paint // the cell under the cursor, reversed

	cursorHead paint // the cursor's row and column headers
	title      paint
	section    paint // a heading in the detail view
	dim        paint
	status     paint
	alert      paint // errors and questions in the status line
	key        paint
	keyOff     paint // a key that cannot act now
	bar        paint
	barEmpty   paint
	selected   paint // the picker's cursor line
}

func newStyles(noColor bool) *styles {
	fg := func(s ansi.Style, c ansi.BasicColor) ansi.Style {
		if noColor {
			return s
		}
		return s.ForegroundColor(c)
	}
	st := ansi.NewStyle
	s := &styles{
		cursorHead: newPaint(st().Bold().Underline(true)),
		title:      newPaint(st().Bold()),
		section:    newPaint(fg(st().Bold(), ansi.Cyan)),
		dim:        newPaint(fg(st(), ansi.BrightBlack)),
		status:     newPaint(fg(st(), ansi.Cyan)),
		alert:      newPaint(fg(st().Bold(), ansi.Yellow)),
		key:        newPaint(st().Bold()),
		keyOff:     newPaint(fg(st().Faint(), ansi.BrightBlack)),
		bar:        newPaint(fg(st(), ansi.Cyan)),
		barEmpty:   newPaint(fg(st(), ansi.BrightBlack)),
		selected:   newPaint(st().Reverse(true)),
	}
	colours := [numKinds]ansi.BasicColor{
		kindPending:    ansi.BrightBlack,
		kindQueued:     ansi.BrightBlack,
		kindLoading:    ansi.Blue,
		kindRunning:    ansi.Cyan,
		kindJudging:    ansi.Cyan,
		kindOK:         ansi.Green,
		kindCancelled:  ansi.BrightBlack,
		kindPass:       ansi.Green,
		kindWarn:       ansi.Yellow,
		kindJudgeError: ansi.Magenta,
		kindErrored:    ansi.Magenta,
		kindFail:       ansi.Red,
		kindFailed:     ansi.Red,
	}
	for k, c := range colours {
		base := st()
		if kind(k) == kindPass || kind(k) == kindFail {
			base = base.Bold()
		}
		s.kind[k] = newPaint(fg(base, c))
		s.cursorKind[k] = newPaint(fg(base, c).Reverse(true))
	}
	return s
}
