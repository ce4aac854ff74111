package ui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Smallest screen the program draws on; below it, it says so.
const (
	minWidth  = 60
	minHeight = 15
)

// common is what every component shares: the screen size, styles, keys,
// glyphs and the width method. Components hold a pointer to the one the root
// model owns.
type common struct {
	width, height int
	styles        *styles
	keys          *keyMap
	glyphs        *glyphs
	opts          Options
	now           func() time.Time

	// wm measures text, and there is one rule for it: wcwidth, where ⚠️
	// (U+26A0 U+FE0F) is one column, as terminals that go by wcwidth draw
	// it (tmux 3.3 among them), unless the terminal answers bubbletea's
	// mode 2027 query that it knows the mode (set, reset or permanently
	// set); then grapheme clusters, where ⚠️ is two. That is when
	// bubbletea's renderer switches too (and turns the mode on), so the
	// screen follows it in Update (unicodeCore). The headless lines, show
	// and every other text for a file or a pipe have no terminal to ask and
	// keep the default, so they line up with the grid wherever the terminal
	// does not say otherwise. --ascii draws marks one column a letter under
	// either rule, for a terminal that draws ⚠️ two wide and does not say.
	wm ansi.Method
}

func newCommon(opts Options) *common {
	g := glyphsFor(opts.ASCII)
	return &common{
		styles: newStyles(opts.NoColor),
		keys:   newKeyMap(),
		glyphs: &g,
		opts:   opts,
		now:    time.Now,
		wm:     ansi.WcWidth,
	}
}

// plainASCII reports whether s is printable ASCII, one column a byte. Most
// names are, and measuring them this way keeps grapheme segmentation off the
// per-frame path.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f {
			return false
		}
	}
	return true
}

// sw is the display width of s.
func (c *common) sw(s string) int {
	if plainASCII(s) {
		return len(s)
	}
	return c.wm.StringWidth(s)
}

// truncate cuts s to w columns, the ellipsis included.
func (c *common) truncate(s string, w int) string {
	if !plainASCII(s) {
		return c.wm.Truncate(s, w, c.glyphs.ellipsis)
	}
	if ew := c.wm.StringWidth(c.glyphs.ellipsis); w >= ew {
		return s[:w-ew] + c.glyphs.ellipsis
	}
	return ""
}

// fit cuts s to w columns with an ellipsis and pads it to exactly w.
func (c *common) fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := c.sw(s)
	if n > w {
		s = c.truncate(s, w)
		n = c.sw(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// fitRight is fit aligned to the right.
func (c *common) fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := c.sw(s)
	if n > w {
		return c.fit(s, w)
	}
	return strings.Repeat(" ", w-n) + s
}

// cut truncates s to w columns with an ellipsis, without padding.
func (c *common) cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if c.sw(s) <= w {
		return s
	}
	return c.truncate(s, w)
}

// shortModel is the part of a model name a column header has room for: the
// name after its last "/" (an organisation prefix says little in a grid).
func shortModel(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return name
}

// tooSmall is what a screen under minWidth × minHeight shows instead of
// itself, and whether it is that small.
func (c *common) tooSmall() (string, bool) {
	w, h := c.width, c.height
	if w >= minWidth && h >= minHeight {
		return "", false
	}
	lines := []string{
		c.cut("pitwall needs at least "+itoa(minWidth)+"×"+itoa(minHeight), w),
		c.cut("this terminal is "+itoa(w)+"×"+itoa(h), w),
		c.cut("enlarge it, or press q to quit", w),
	}
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, strings.Join(lines, "\n")), true
}
