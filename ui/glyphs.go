package ui

import "strings"

// glyphs are the marks a cell can carry. Each carries its meaning without
// colour, so the grid reads the same under NO_COLOR and to colour-blind users.
type glyphs struct {
	pending, queued, loading     string
	ok, failed, errored, cancel  string
	spinner                      []string
	pass, fail, warn, judgeError string
	judging                      string // a completed cell waiting for its judge
	sep                          string // column separator
	cursor                       string // the cursor row's gutter mark
	ellipsis                     string
	times                        string // model × test
	barFull, barEmpty            string
	dash                         string // no value
	down                         string // a server that is down
	up                           string
	critical                     string // a test whose severity is critical
}

// unicodeGlyphs is the default set.
var unicodeGlyphs = glyphs{
	pending:    "·",
	queued:     "…",
	loading:    "⧗",
	ok:         "✓",
	failed:     "❌",
	errored:    "⚠️",
	cancel:     "⊘",
	spinner:    []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"},
	pass:       "PASS",
	fail:       "FAIL",
	warn:       "WARN",
	judgeError: "J-ERR",
	judging:    "✓ …",
	sep:        "│",
	cursor:     "▸",
	ellipsis:   "…",
	times:      "×",
	barFull:    "█",
	barEmpty:   "░",
	dash:       "—",
	down:       "✗",
	up:         "●",
	critical:   "⚑",
}

// asciiGlyphs is for --ascii and TERM=dumb. A failed check reads FAIL with no
// score; a judge's FAIL always carries one.
var asciiGlyphs = glyphs{
	pending:    ".",
	queued:     "..",
	loading:    "load",
	ok:         "ok",
	failed:     "FAIL",
	errored:    "ERR",
	cancel:     "cncl",
	spinner:    []string{"run", "run.", "run.."}, // a turning bar would read as a column separator
	pass:       "PASS",
	fail:       "FAIL",
	warn:       "WARN",
	judgeError: "J-ERR",
	judging:    "ok ..",
	sep:        "|",
	cursor:     ">",
	ellipsis:   "~",
	times:      "x",
	barFull:    "#",
	barEmpty:   "-",
	dash:       "-",
	down:       "x",
	up:         "*",
	critical:   "!",
}

func glyphsFor(ascii bool) glyphs {
	if ascii {
		return asciiGlyphs
	}
	return unicodeGlyphs
}

// asciiFold swaps the few non-ASCII marks that the screen's own words use
// (separators, arrows, bars) for ASCII ones of the same width, so that
// --ascii output is ASCII throughout without a second copy of every label.
var asciiFold = strings.NewReplacer(
	"·", "-", "–", "-", "—", "-", "…", "~", "×", "x", "•", "|",
	"→", ">", "←", "<", "↑", "^", "↓", "v", "▸", ">",
	"█", "#", "░", "-", "●", "*", "✗", "x", "κ", "k",
)
