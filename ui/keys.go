package ui

import "charm.land/bubbles/v2/key"

// Every key the program answers to is a binding here, in the key map of the
// component that answers it (bubbles' convention: a KeyMap per component,
// ShortHelp for its footer, FullHelp for the ? screen). A binding that
// cannot act right now is disabled: it does nothing, the full help shows it
// greyed and the footer leaves it out. refreshKeys decides which.

// keyMap is every component's key map. The keys answered on every screen
// (quit, ctrl+c, and y to a question) sit at the top; the rest belong to
// the screen in front.
type keyMap struct {
	Quit, Interrupt key.Binding

	Prompt  promptKeyMap
	Grid    gridKeyMap
	Detail  detailKeyMap
	Compare compareKeyMap
	Side    sideKeyMap
	Versus  versusKeyMap
	Picker  pickerKeyMap
	Filter  filterKeyMap
	Help    helpKeyMap
	Qualify qualifyKeyMap
}

func newKeyMap() *keyMap {
	return &keyMap{
		Quit:      quitKey(),
		Interrupt: interruptKey(),
		Prompt:    defaultPromptKeyMap(),
		Grid:      defaultGridKeyMap(),
		Detail:    defaultDetailKeyMap(),
		Compare:   defaultCompareKeyMap(),
		Side:      defaultSideKeyMap(),
		Versus:    defaultVersusKeyMap(),
		Picker:    defaultPickerKeyMap(),
		Filter:    defaultFilterKeyMap(),
		Help:      defaultHelpKeyMap(),
		Qualify:   defaultQualifyKeyMap(),
	}
}

// binding is a key.Binding with the word its help shows for it.
func binding(help, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// The keys several components share, made once so that they read the same
// everywhere.
func upKey() key.Binding        { return binding("↑/k", "up", "up", "k") }
func downKey() key.Binding      { return binding("↓/j", "down", "down", "j") }
func leftKey() key.Binding      { return binding("←/h", "left", "left", "h") }
func rightKey() key.Binding     { return binding("→/l", "right", "right", "l") }
func topKey() key.Binding       { return binding("g", "first row", "g", "home") }
func bottomKey() key.Binding    { return binding("G", "last row", "G", "end") }
func pageUpKey() key.Binding    { return binding("pgup", "page up", "pgup") }
func pageDownKey() key.Binding  { return binding("pgdn", "page down", "pgdown") }
func backKey() key.Binding      { return binding("esc", "back", "esc") }
func helpKey() key.Binding      { return binding("?", "help", "?") }
func quitKey() key.Binding      { return binding("q", "quit", "q") }
func interruptKey() key.Binding { return binding("ctrl+c", "interrupt", "ctrl+c") }
func judgeKey() key.Binding     { return binding("J", "judge", "J") }
func rejudgeKey() key.Binding   { return binding("r", "re-judge", "r") }
func compareKey() key.Binding   { return binding("c", "compare", "c") }

// withDesc is b saying desc in the full key map, where the footer's word is
// too short; b's keys and whether it is enabled stay.
func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// footerKey is a binding a footer lists, with how soon a footer too narrow
// for all its keys leaves it out: the highest drop goes first.
type footerKey struct {
	key.Binding
	drop int
}

// How soon each key leaves a narrow footer, by how much it is missed.
// Help and quit never leave, since ? lists the rest.
const (
	dropNever     = iota // ?, q, ctrl+c
	dropOpenClose        // enter, esc
	dropStop
	dropFilter
	dropRejudge
	dropJudge
	dropStatus
	dropExport
	dropCompare
	dropFigures
	dropTranspose
	dropUpDown
	dropPage
	dropFirst // the keys a footer can best do without
)

// bindings are a footer's bindings, in its order.
func bindings(f []footerKey) []key.Binding {
	bs := make([]key.Binding, len(f))
	for i, fk := range f {
		bs[i] = fk.Binding
	}
	return bs
}

// gridKeyMap is the grid's keys, and the full key map ? shows.
type gridKeyMap struct {
	Up, Down, Left, Right key.Binding
	Top, Bottom           key.Binding
	PageUp, PageDown      key.Binding
	Detail, Back          key.Binding

	Figures, Transpose, Filter, ClearFilter, StatusFilter, Compare key.Binding
	// SideBySide opens the cursor's test with every model's reply in
	// columns.
	SideBySide key.Binding
	// Versus shows the cursor's cell beside the same cell in another run
	// of the battery, asking which.
	Versus key.Binding

	Stop, Rejudge, RejudgeAll, Judge, Export key.Binding
	// CancelJudging stops a re-judge or a judge switch after the run's
	// end: the earlier verdicts come back, so it does not ask.
	CancelJudging key.Binding

	Help, Quit key.Binding
}

func defaultGridKeyMap() gridKeyMap {
	return gridKeyMap{
		Up: upKey(), Down: downKey(), Left: leftKey(), Right: rightKey(),
		Top: topKey(), Bottom: bottomKey(), PageUp: pageUpKey(), PageDown: pageDownKey(),
		Detail:        binding("enter", "detail", "enter"),
		Back:          backKey(),
		Figures:       binding("t", "figures", "t"),
		Transpose:     binding("x", "transpose", "x"),
		Filter:        binding("/", "filter", "/"),
		ClearFilter:   binding("esc", "clear filter", "esc"),
		StatusFilter:  binding("f", "status", "f"),
		Compare:       compareKey(),
		SideBySide:    binding("v", "side by side", "v"),
		Versus:        binding("V", "other run", "V"),
		Stop:          binding("s", "stop", "s"),
		Rejudge:       rejudgeKey(),
		RejudgeAll:    binding("R", "re-judge all", "R"),
		Judge:         judgeKey(),
		Export:        binding("e", "export", "e"),
		CancelJudging: binding("s", "cancel", "s", "esc"),
		Help:          helpKey(),
		Quit:          quitKey(),
	}
}

func (k gridKeyMap) footer() []footerKey {
	return []footerKey{
		{k.Detail, dropOpenClose}, {k.Stop, dropStop}, {k.Rejudge, dropRejudge}, {k.Judge, dropJudge},
		{k.Compare, dropCompare}, {k.Figures, dropFigures}, {k.Transpose, dropTranspose},
		{k.Filter, dropFilter}, {k.ClearFilter, dropOpenClose}, {k.StatusFilter, dropStatus},
		{k.Export, dropExport}, {k.Help, dropNever}, {k.Quit, dropNever},
	}
}

// ShortHelp is the grid's footer.
func (k gridKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// FullHelp is the key map ? shows, a column per group (fullHelpTitles),
// each key with its longer word.
func (k gridKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Left, k.Right, k.Top, k.Bottom, k.PageUp, k.PageDown},
		{
			withDesc(k.Detail, "open the cell"), k.Back,
			withDesc(k.Figures, "figures: latency, TTFT, tok/s"),
			withDesc(k.Transpose, "swap tests and models"),
			withDesc(k.Filter, "filter by name"),
			withDesc(k.ClearFilter, "clear the / filter"),
			withDesc(k.StatusFilter, "all/failures/errors/disagreements"),
			withDesc(k.Compare, "rank the models, with intervals"),
			withDesc(k.SideBySide, "the test's replies side by side"),
			withDesc(k.Versus, "the cell in another run (asks)"),
		},
		{
			withDesc(k.Stop, "stop the run (y/N)"),
			withDesc(k.Rejudge, "re-judge the cell"),
			withDesc(k.RejudgeAll, "re-judge the whole run"),
			withDesc(k.Judge, "switch the judge in view"),
			withDesc(k.Export, "export (asks the format)"),
			k.Help,
			withDesc(k.Quit, "quit (y/N while running)"),
		},
	}
}

// fullHelpTitles name the columns of FullHelp.
var fullHelpTitles = []string{"move", "view", "run"}

// detailKeyMap is the detail view's keys. The viewport answers the moves
// (its own key map); these list them in the footer.
type detailKeyMap struct {
	Up, Down, PageDown, Top, Bottom key.Binding
	Back, Rejudge, Judge, Help      key.Binding
	Quit                            key.Binding
}

func defaultDetailKeyMap() detailKeyMap {
	return detailKeyMap{
		Up: upKey(), Down: downKey(), PageDown: pageDownKey(), Top: topKey(), Bottom: bottomKey(),
		Back: backKey(), Rejudge: rejudgeKey(), Judge: judgeKey(), Help: helpKey(), Quit: quitKey(),
	}
}

func (k detailKeyMap) footer() []footerKey {
	return []footerKey{
		{k.Up, dropUpDown}, {k.Down, dropUpDown}, {k.PageDown, dropPage}, {k.Back, dropOpenClose},
		{k.Rejudge, dropRejudge}, {k.Judge, dropJudge}, {k.Help, dropNever}, {k.Quit, dropNever},
	}
}

// ShortHelp is the detail view's footer.
func (k detailKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// scrollKeyMap is the moves of a screen that scrolls as a whole: the
// ranking, the full key map.
type scrollKeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

func defaultScrollKeyMap() scrollKeyMap {
	return scrollKeyMap{
		Up: upKey(), Down: downKey(), PageUp: pageUpKey(), PageDown: pageDownKey(),
		Top: topKey(), Bottom: bottomKey(),
	}
}

// compareKeyMap is the ranking's keys; c closes it as it opened it.
type compareKeyMap struct {
	scrollKeyMap
	Back, Compare, Help, Quit key.Binding
}

func defaultCompareKeyMap() compareKeyMap {
	return compareKeyMap{
		scrollKeyMap: defaultScrollKeyMap(),
		Back:         backKey(), Compare: compareKey(), Help: helpKey(), Quit: quitKey(),
	}
}

func (k compareKeyMap) footer() []footerKey {
	return []footerKey{
		{k.Back, dropOpenClose}, {k.Up, dropUpDown}, {k.Down, dropUpDown}, {k.PageDown, dropPage},
		{k.Top, dropFirst}, {k.Bottom, dropFirst}, {k.Help, dropNever}, {k.Quit, dropNever},
	}
}

// ShortHelp is the ranking's footer.
func (k compareKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// sideKeyMap is the side-by-side view's keys: it scrolls, ←/→ move along
// the models, and v or esc closes it as v opened it.
type sideKeyMap struct {
	scrollKeyMap
	Left, Right, Back, Close, Help, Quit key.Binding
}

func defaultSideKeyMap() sideKeyMap {
	return sideKeyMap{
		scrollKeyMap: defaultScrollKeyMap(),
		Left:         withDesc(leftKey(), "models"), Right: withDesc(rightKey(), "models"),
		Back: backKey(), Close: binding("v", "close", "v"), Help: helpKey(), Quit: quitKey(),
	}
}

func (k sideKeyMap) footer() []footerKey {
	return []footerKey{
		{k.Back, dropOpenClose}, {k.Up, dropUpDown}, {k.Down, dropUpDown}, {k.PageDown, dropPage},
		{k.Left, dropTranspose}, {k.Right, dropTranspose}, {k.Help, dropNever}, {k.Quit, dropNever},
	}
}

// ShortHelp is the side-by-side view's footer.
func (k sideKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// versusKeyMap is V's keys: ↑/↓ and enter choose the other run, then the
// view scrolls; V or esc closes it as V opened it.
type versusKeyMap struct {
	scrollKeyMap
	Choose, Back, Close, Help, Quit key.Binding
}

func defaultVersusKeyMap() versusKeyMap {
	return versusKeyMap{
		scrollKeyMap: defaultScrollKeyMap(),
		Choose:       binding("enter", "choose", "enter"),
		Back:         backKey(), Close: binding("V", "close", "V"), Help: helpKey(), Quit: quitKey(),
	}
}

func (k versusKeyMap) footer() []footerKey {
	return []footerKey{
		{k.Choose, dropOpenClose}, {k.Back, dropOpenClose}, {k.Up, dropUpDown}, {k.Down, dropUpDown},
		{k.PageDown, dropPage}, {k.Help, dropNever}, {k.Quit, dropNever},
	}
}

// ShortHelp is V's footer.
func (k versusKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// helpKeyMap is the full key map's own keys: it scrolls, and ? or esc
// closes it.
type helpKeyMap struct {
	scrollKeyMap
	Back, Close, Quit key.Binding
}

func defaultHelpKeyMap() helpKeyMap {
	return helpKeyMap{
		scrollKeyMap: defaultScrollKeyMap(),
		Back:         backKey(),
		Close:        helpKey(),
		Quit:         quitKey(),
	}
}

func (k helpKeyMap) footer() []footerKey {
	return []footerKey{
		{k.Back, dropOpenClose}, {k.Up, dropUpDown}, {k.Down, dropUpDown}, {k.PageDown, dropPage},
		{k.Top, dropFirst}, {k.Bottom, dropFirst}, {k.Quit, dropNever},
	}
}

// ShortHelp is the full key map's footer.
func (k helpKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// pickerKeyMap is the judge picker's keys; J closes it as it opened it.
type pickerKeyMap struct {
	Up, Down, Choose, Back, Judge, Quit key.Binding
}

func defaultPickerKeyMap() pickerKeyMap {
	return pickerKeyMap{
		Up: upKey(), Down: downKey(),
		Choose: binding("enter", "choose", "enter"),
		Back:   backKey(), Judge: judgeKey(), Quit: quitKey(),
	}
}

func (k pickerKeyMap) footer() []footerKey {
	return []footerKey{{k.Back, dropOpenClose}, {k.Up, dropUpDown}, {k.Down, dropUpDown}, {k.Quit, dropNever}}
}

// ShortHelp is the picker's footer.
func (k pickerKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// filterKeyMap is the keys that edit a / filter being typed; every other
// key types into it.
type filterKeyMap struct {
	Keep, Drop, Erase, EraseAll, Interrupt key.Binding
}

func defaultFilterKeyMap() filterKeyMap {
	return filterKeyMap{
		Keep:      binding("enter", "keep", "enter"),
		Drop:      binding("esc", "clear", "esc"),
		Erase:     binding("backspace", "erase a letter", "backspace"),
		EraseAll:  binding("ctrl+u", "erase", "ctrl+u"),
		Interrupt: interruptKey(),
	}
}

func (k filterKeyMap) footer() []footerKey {
	return []footerKey{{k.Keep, dropOpenClose}, {k.Drop, dropOpenClose}, {k.EraseAll, dropFirst}, {k.Interrupt, dropNever}}
}

// ShortHelp is the footer while a filter is typed.
func (k filterKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }

// promptKeyMap answers a y/N question; any other key is no. ctrl+c
// answers yes to a question about quitting (keyMap.Interrupt).
type promptKeyMap struct {
	Yes    key.Binding
	Export exportKeyMap
}

// exportKeyMap answers e's question, which format to write: the formats
// runner/history writes, each help word the format's name. Any other key
// writes nothing.
type exportKeyMap struct {
	JSON, CSV, Markdown, HTML, JUnit, Text key.Binding
}

// formats are the bindings in the order the question lists them.
func (k exportKeyMap) formats() []key.Binding {
	return []key.Binding{k.JSON, k.CSV, k.Markdown, k.HTML, k.JUnit, k.Text}
}

func defaultPromptKeyMap() promptKeyMap {
	return promptKeyMap{
		Yes: binding("y", "yes", "y", "Y"),
		Export: exportKeyMap{
			// enter keeps e's old answer.
			JSON:     binding("j", "json", "j", "enter"),
			CSV:      binding("c", "csv", "c"),
			Markdown: binding("m", "md", "m"),
			HTML:     binding("h", "html", "h"),
			JUnit:    binding("u", "junit", "u"),
			Text:     binding("t", "text", "t"),
		},
	}
}

// qualifyKeyMap is the keys of pitwall qualify's screen: it scrolls the
// cases and the judges' columns, and quits.
type qualifyKeyMap struct {
	scrollKeyMap
	Left, Right, Quit key.Binding
}

func defaultQualifyKeyMap() qualifyKeyMap {
	return qualifyKeyMap{scrollKeyMap: defaultScrollKeyMap(), Left: leftKey(), Right: rightKey(), Quit: quitKey()}
}

func (k qualifyKeyMap) footer() []footerKey {
	return []footerKey{
		{k.Up, dropUpDown}, {k.Down, dropUpDown}, {k.PageDown, dropPage},
		{k.Left, dropFirst}, {k.Right, dropFirst}, {k.Quit, dropNever},
	}
}

// ShortHelp is qualify's footer.
func (k qualifyKeyMap) ShortHelp() []key.Binding { return bindings(k.footer()) }
