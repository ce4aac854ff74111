package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// helpBody is the full help's part of the screen, between the header and
// the footer.
func helpBody(m *model) []string {
	lines := strings.Split(drawn(m), "\n")
	return lines[headerH : len(lines)-footerH]
}

func TestHelpScrolls(t *testing.T) {
	t.Parallel()
	open := func() (*model, []string) {
		m := testModel(60, 20, Options{LogPath: "/home/me/.pitwall/pitwall.log"}, newFakeCtrl(nil))
		show(m, sceneMidInference())
		all := m.help.lines()
		for i, l := range all {
			all[i] = ansi.Strip(l)
		}
		return m, all
	}
	m, all := open()
	if len(all) <= m.help.height {
		t.Fatalf("the key map (%d lines) fits in %d: nothing to scroll", len(all), m.help.height)
	}
	tests := []struct {
		name  string
		keys  []string
		first int // the index in all of the first line shown
	}{
		{name: "opens at the top", keys: []string{"?"}, first: 0},
		{name: "j goes a line", keys: []string{"?", "j"}, first: 1},
		// The last line of a screen says there is more: pgdn starts with it.
		{name: "pgdn goes a screen", keys: []string{"?", "pgdown"}, first: m.help.height - 1},
		{name: "pgup comes back", keys: []string{"?", "pgdown", "pgup"}, first: 0},
		{name: "G goes to the end", keys: []string{"?", "G"}, first: len(all) - m.help.height},
		{name: "end too", keys: []string{"?", "end"}, first: len(all) - m.help.height},
		{name: "k from the end goes up a line", keys: []string{"?", "G", "k"}, first: len(all) - m.help.height - 1},
		{name: "g back to the top", keys: []string{"?", "G", "g"}, first: 0},
		{name: "pgdn stops at the end", keys: []string{"?", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown"}, first: len(all) - m.help.height},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := open()
			press(m, tt.keys...)
			body := helpBody(m)
			if body[0] != all[tt.first] {
				t.Fatalf("first line %q, want line %d %q\n%s", body[0], tt.first, all[tt.first], drawn(m))
			}
			atEnd := tt.first == len(all)-m.help.height
			if last := body[len(body)-1]; atEnd != (last == all[len(all)-1]) {
				t.Errorf("last line %q; at the end: %v", last, atEnd)
			}
		})
	}
}

func TestHelpFooterListsItsKeys(t *testing.T) {
	t.Parallel()
	m := testModel(100, 20, Options{}, newFakeCtrl(nil))
	show(m, sceneMidInference())
	press(m, "?")
	got := footer(m)
	for _, want := range []string{"pgdn page down", "G last row"} {
		if !strings.Contains(got, want) {
			t.Errorf("help's footer lacks %q: %q", want, got)
		}
	}
}

// TestHelpLegendWrapsBetweenItems lays the full key map, its legend and the
// grid's footer out at 60, 80 and 120 columns: no line is wider than the
// screen, and a glyph never ends a line that its meaning starts.
func TestHelpLegendWrapsBetweenItems(t *testing.T) {
	t.Parallel()
	for _, w := range []int{60, 80, 120} {
		t.Run(itoa(w), func(t *testing.T) {
			m := testModel(w, 40, Options{LogPath: "/home/me/.pitwall/pitwall.log"}, newFakeCtrl(nil))
			show(m, sceneMidInference())
			var lines []string
			for _, l := range m.help.lines() {
				lines = append(lines, ansi.Strip(l))
			}
			foot := ansi.Strip(m.help.short(m.c.keys.Grid.footer()))
			all := append(lines, "", foot)
			for i, l := range all {
				if lw := m.c.wm.StringWidth(l); lw > w {
					t.Errorf("line %d is %d wide, more than %d: %q", i, lw, w, l)
				}
			}
			text := strings.Join(lines, "\n")
			g := m.c.glyphs
			for _, item := range []string{g.ok + " completed", g.failed + " a check failed", g.errored + " error",
				g.cancel + " cancelled", g.pending + " pending", g.queued + " queued", g.spinner[0] + " running",
				g.loading + " loading the model", g.judgeError + " the judge failed", g.judging + " being judged"} {
				if !strings.Contains(text, item) {
					t.Errorf("%q is not whole on one line:\n%s", item, text)
				}
			}
			golden(t, "help_legend_"+itoa(w), strings.Join(all, "\n"))
		})
	}
}
