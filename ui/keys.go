package ui

import "charm.land/bubbles/v2/key"

// keyMap holds every key the program answers to. A binding that cannot act
// right now is disabled: it does nothing, the full help shows it greyed and
// the footer leaves it out.
type keyMap struct {
	Up, Down, Left, Right key.Binding
	Top, Bottom           key.Binding
	PageUp, PageDown      key.Binding
	Detail, Back          key.Binding

	Figures, Transpose, Filter, ClearFilter, StatusFilter, Compare key.Binding

	Stop, Rejudge, RejudgeAll, Judge, Export key.Binding

	Help, Quit, Interrupt key.Binding

	Yes key.Binding

	// What the footer lists while a / filter is typed, where the other
	// keys go into the filter.
	FilterKeep, FilterDrop, FilterErase key.Binding
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
		ClearFilter:  b([]string{"esc"}, "esc", "clear filter"),
		StatusFilter: b([]string{"f"}, "f", "status"),
		Compare:      b([]string{"c"}, "c", "compare"),
		Stop:         b([]string{"s"}, "s", "stop"),
		Rejudge:      b([]string{"r"}, "r", "re-judge"),
		RejudgeAll:   b([]string{"R"}, "R", "re-judge all"),
		Judge:        b([]string{"J"}, "J", "judge"),
		Export:       b([]string{"e"}, "e", "export"),
		Help:         b([]string{"?"}, "?", "help"),
		Quit:         b([]string{"q"}, "q", "quit"),
		Interrupt:    b([]string{"ctrl+c"}, "ctrl+c", "interrupt"),
		Yes:          b([]string{"y", "Y"}, "y", "yes"),
		FilterKeep:   b([]string{"enter"}, "enter", "keep"),
		FilterDrop:   b([]string{"esc"}, "esc", "clear"),
		FilterErase:  b([]string{"ctrl+u"}, "ctrl+u", "erase"),
	}
}

// ShortHelp is the footer of the grid.
func (k *keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Detail, k.Stop, k.Rejudge, k.Judge, k.Compare, k.Figures, k.Transpose, k.Filter, k.ClearFilter, k.StatusFilter, k.Export, k.Help, k.Quit}
}

// DetailHelp is the footer of the detail view.
func (k *keyMap) DetailHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageDown, k.Back, k.Rejudge, k.Judge, k.Help, k.Quit}
}

// OverlayHelp is the footer of the judge picker.
func (k *keyMap) OverlayHelp() []key.Binding {
	return []key.Binding{k.Back, k.Up, k.Down, k.Quit}
}

// CompareHelp is the footer of the ranking, which scrolls; c closes it
// as it opened it.
func (k *keyMap) CompareHelp() []key.Binding {
	return []key.Binding{k.Back, k.Up, k.Down, k.PageDown, k.Top, k.Bottom, k.Help, k.Quit}
}

// KeysHelp is the footer of the full key map, which scrolls.
func (k *keyMap) KeysHelp() []key.Binding {
	return []key.Binding{k.Back, k.Up, k.Down, k.PageDown, k.Top, k.Bottom, k.Quit}
}

// FilterHelp is the footer while a / filter is typed: every other key
// types into it.
func (k *keyMap) FilterHelp() []key.Binding {
	return []key.Binding{k.FilterKeep, k.FilterDrop, k.FilterErase, k.Interrupt}
}

// FullHelp is the key map `?` shows, a column per group.
func (k *keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Left, k.Right, k.Top, k.Bottom, k.PageUp, k.PageDown},
		{k.Detail, k.Back, k.Figures, k.Transpose, k.Filter, k.ClearFilter, k.StatusFilter, k.Compare},
		{k.Stop, k.Rejudge, k.RejudgeAll, k.Judge, k.Export, k.Help, k.Quit},
	}
}

// longHelp is what the full key map says of a key, where the footer's word
// is too short. It is keyed by the footer's word: esc is two keys.
var longHelp = map[string]string{
	"detail":       "open the cell",
	"figures":      "figures: latency, TTFT, tok/s",
	"transpose":    "swap tests and models",
	"filter":       "filter by name",
	"clear filter": "clear the / filter",
	"status":       "all/failures/errors/disagreements",
	"compare":      "rank the models, with intervals",
	"stop":         "stop the run (y/N)",
	"re-judge":     "re-judge the cell",
	"re-judge all": "re-judge the whole run",
	"judge":        "switch the judge in view",
	"export":       "write the JSON export",
	"quit":         "quit (y/N while running)",
}

// footerRank orders keys by how much a footer too narrow for all of them
// misses each: the highest rank goes first. Help and quit (0) always stay,
// since ? lists the rest; a key not listed goes before any that is.
var footerRank = map[string]int{
	"?": 0, "q": 0, "ctrl+c": 0,
	"enter": 1, "esc": 1,
	"s": 2, "/": 3, "r": 4, "J": 5, "f": 6, "e": 7, "c": 8, "t": 9, "x": 10,
	"↑/k": 11, "↓/j": 11, "pgdn": 12,
}

// fullHelpTitles name the columns of FullHelp.
var fullHelpTitles = []string{"move", "view", "run"}
