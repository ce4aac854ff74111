package ui

import "charm.land/bubbles/v2/key"

// keyMap holds every key the program answers to. A binding that cannot act
// right now is disabled: it does nothing and help shows it greyed.
type keyMap struct {
	Up, Down, Left, Right key.Binding
	Top, Bottom           key.Binding
	PageUp, PageDown      key.Binding
	Detail, Back          key.Binding

	Figures, Transpose, Filter, StatusFilter key.Binding

	Stop, Rejudge, RejudgeAll, Judge, Export key.Binding

	Help, Quit key.Binding

	Yes key.Binding
}

func newKeyMap() *keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return &keyMap{
		Up:           b([]string{"up", "k"}, "↑/k", "up"),
		Down:         b([]string{"down", "j"}, "↓/j", "down"),
		Left:         b([]string{"left", "h"}, "←/h", "left"),
		Right:        b([]string{"right", "l"}, "→/l", "right"),
		Top:          b([]string{"g", "home"}, "g", "first row"),
		Bottom:       b([]string{"G", "end"}, "G", "last row"),
		PageUp:       b([]string{"pgup"}, "pgup", "page up"),
		PageDown:     b([]string{"pgdown"}, "pgdn", "page down"),
		Detail:       b([]string{"enter"}, "enter", "detail"),
		Back:         b([]string{"esc"}, "esc", "back"),
		Figures:      b([]string{"t"}, "t", "figures"),
		Transpose:    b([]string{"x"}, "x", "transpose"),
		Filter:       b([]string{"/"}, "/", "filter"),
		StatusFilter: b([]string{"f"}, "f", "status"),
		Stop:         b([]string{"s"}, "s", "stop"),
		Rejudge:      b([]string{"r"}, "r", "re-judge"),
		RejudgeAll:   b([]string{"R"}, "R", "re-judge all"),
		Judge:        b([]string{"J"}, "J", "judge"),
		Export:       b([]string{"e"}, "e", "export"),
		Help:         b([]string{"?"}, "?", "help"),
		Quit:         b([]string{"q", "ctrl+c"}, "q", "quit"),
		Yes:          b([]string{"y", "Y"}, "y", "yes"),
	}
}

// ShortHelp is the footer of the grid.
func (k *keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Detail, k.Stop, k.Rejudge, k.Judge, k.Figures, k.Transpose, k.Filter, k.StatusFilter, k.Export, k.Help, k.Quit}
}

// DetailHelp is the footer of the detail view.
func (k *keyMap) DetailHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageDown, k.Back, k.Rejudge, k.Judge, k.Help, k.Quit}
}

// OverlayHelp is the footer of the full help and the judge picker.
func (k *keyMap) OverlayHelp() []key.Binding {
	return []key.Binding{k.Back, k.Up, k.Down, k.Quit}
}

// FullHelp is the key map `?` shows, a column per group.
func (k *keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Left, k.Right, k.Top, k.Bottom, k.PageUp, k.PageDown},
		{k.Detail, k.Back, k.Figures, k.Transpose, k.Filter, k.StatusFilter},
		{k.Stop, k.Rejudge, k.RejudgeAll, k.Judge, k.Export, k.Help, k.Quit},
	}
}

// longHelp is what the full key map says of a key, where the footer's word
// is too short.
var longHelp = map[string]string{
	"enter": "open the cell",
	"t":     "figures: latency, TTFT, tok/s",
	"x":     "swap tests and models",
	"/":     "filter by name",
	"f":     "all/failures/errors/disagreements",
	"s":     "stop the run (y/N)",
	"r":     "re-judge the cell",
	"R":     "re-judge the whole run",
	"J":     "switch the judge in view",
	"e":     "write the JSON export",
	"q":     "quit (y/N while running)",
}

// fullHelpTitles name the columns of FullHelp.
var fullHelpTitles = []string{"move", "view", "run"}
