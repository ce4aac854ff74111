package ui

import (
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// TestRendererLaysColumnsOut draws frames into the cell buffer that
// bubbletea's renderer uses, with each width method the renderer can be in,
// and checks that the grid's separators land in the same screen columns on
// every line: what the terminal is told, not only what we measured.
func TestRendererLaysColumnsOut(t *testing.T) {
	t.Parallel()
	for _, wm := range []ansi.Method{ansi.WcWidth, ansi.GraphemeWidth} {
		for _, keys := range [][]string{nil, {"t"}, {"x"}, {"l", "l", "l", "j"}} {
			m := testModel(120, 30, Options{}, nil)
			m.c.wm = wm
			show(m, sceneWarnings())
			press(m, keys...)
			scr := uv.NewScreenBuffer(120, 30)
			scr.Method = wm
			uv.NewStyledString(m.render()).Draw(scr, uv.Rect(0, 0, 120, 30))
			var want []int
			lines := 0
			for y := headerH; y < 30; y++ {
				var seps []int
				for x := range 120 {
					if c := scr.CellAt(x, y); c != nil && c.Content == m.c.glyphs.sep {
						seps = append(seps, x)
					}
				}
				if len(seps) == 0 {
					break
				}
				lines++
				if want == nil {
					want = seps
				} else if !equalInts(seps, want) {
					t.Errorf("method %v keys %v: line %d has separators at %v, the header at %v", wm, keys, y, seps, want)
				}
			}
			if lines < 3 {
				t.Fatalf("method %v: grid not found on screen", wm)
			}
		}
	}
}
