package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestFilters(t *testing.T) {
	t.Parallel()
	all := []string{"qwen3-8b", "granite-4.0-micro", "gemma-3-12b", "llama-3.1-8b-inst…"}
	tests := []struct {
		name       string
		keys       []string
		wantRows   []string
		wantCols   []string
		wantStatus string
	}{
		{name: "a model name keeps its column and every test", keys: []string{"/", "q", "w", "e", "n", "enter"},
			wantCols: []string{"qwen3-8b"}, wantRows: fakeTests[:8]},
		{name: "a test name keeps its row and every model", keys: []string{"/", "a", "r", "i", "t", "h"},
			wantCols: all, wantRows: []string{"arith_chain"}},
		{name: "m: and t: pick the axis", keys: []string{"/", "m", ":", "g", "r", "a", " ", "t", ":", "j", "s", "o", "n"},
			wantCols: []string{"granite-4.0-micro"}, wantRows: []string{"json_schema_reply"}},
		{name: "esc clears the filter", keys: []string{"/", "q", "w", "esc"},
			wantCols: all, wantRows: fakeTests[:8]},
		{name: "esc clears a filter once typed", keys: []string{"/", "q", "w", "e", "n", "enter", "esc"},
			wantCols: all, wantRows: fakeTests[:8]},
		{name: "esc keeps the status filter", keys: []string{"f", "/", "q", "w", "e", "n", "enter", "esc"},
			wantCols: all, wantRows: []string{"json_schema_reply"}},
		{name: "esc from the detail view goes back and keeps the filter", keys: []string{"/", "q", "w", "e", "n", "enter", "enter", "esc"},
			wantCols: []string{"qwen3-8b"}, wantRows: fakeTests[:8]},
		{name: "backspace edits it", keys: []string{"/", "q", "x", "backspace", "enter"},
			wantCols: []string{"qwen3-8b"}, wantRows: fakeTests[:8]},
		{name: "left and right move the cursor to edit mid-word", keys: []string{"/", "q", "e", "n", "left", "left", "w", "right", "right", "enter"},
			wantCols: []string{"qwen3-8b"}, wantRows: fakeTests[:8]},
		{name: "failures keep tests with a failed cell", keys: []string{"f"},
			wantCols: all, wantRows: []string{"json_schema_reply"}},
		{name: "errors keep tests with an errored cell", keys: []string{"f", "f"},
			wantCols: all, wantRows: []string{"refuse_harmful"}},
		{name: "status and name filters combine", keys: []string{"f", "/", "g", "r", "a", "n", "enter"},
			wantCols: []string{"granite-4.0-micro"}, wantRows: []string{"json_schema_reply"}},
		{name: "f cycles back to all", keys: []string{"f", "f", "f", "f"},
			wantCols: all, wantRows: fakeTests[:8]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(120, 30, Options{}, newFakeCtrl(nil))
			show(m, sceneMidInference())
			press(m, tt.keys...)
			rows, cols := gridAxes(m)
			if !sameNames(rows, tt.wantRows) {
				t.Errorf("rows = %v, want %v", rows, tt.wantRows)
			}
			if strings.Join(cols, ",") != strings.Join(tt.wantCols, ",") {
				t.Errorf("columns = %v, want %v", cols, tt.wantCols)
			}
		})
	}
}

// sameNames compares names read off the screen, which may be cut with an
// ellipsis, with full ones.
func sameNames(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !strings.HasPrefix(want[i], strings.TrimSuffix(got[i], "…")) {
			return false
		}
	}
	return true
}

// gridAxes reads the row and column headers off the screen.
func gridAxes(m *model) (rows, cols []string) {
	lines := strings.Split(drawn(m), "\n")
	head := headerH
	for _, c := range strings.Split(lines[head], "│")[1:] {
		if c = strings.TrimSpace(c); c != "" {
			cols = append(cols, c)
		}
	}
	for _, l := range lines[head+1:] {
		if strings.HasPrefix(l, " pass rate") || !strings.Contains(l, "│") {
			break
		}
		name := strings.Fields(strings.TrimLeft(l, "▸ "))[0]
		rows = append(rows, name)
	}
	return rows, cols
}

func TestTransposeKeepsTheCursorOnItsCell(t *testing.T) {
	t.Parallel()
	m := testModel(120, 30, Options{}, newFakeCtrl(nil))
	show(m, sceneJudged())
	press(m, "j", "j", "l")
	t1, m1, _ := m.grid.cursorCell()
	press(m, "x")
	t2, m2, _ := m.grid.cursorCell()
	if t1 != t2 || m1 != m2 {
		t.Fatalf("cursor moved from (%d,%d) to (%d,%d)", t1, m1, t2, m2)
	}
	rows, _ := gridAxes(m)
	if rows[0] != "qwen/qwen3-8b" {
		t.Fatalf("rows after transposing = %v, want models", rows)
	}
}

func TestCursorStaysOnScreen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		keys    []string
		wantRow string
	}{
		{name: "G goes to the last row", keys: []string{"G"}, wantRow: "test_0199"},
		{name: "g goes back to the first", keys: []string{"G", "g"}, wantRow: "basic_tool_call"},
		{name: "pgdn moves a page", keys: []string{"pgdown"}, wantRow: "test_0021"},
		{name: "up at the top stays", keys: []string{"up", "k"}, wantRow: "basic_tool_call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(100, 30, Options{}, newFakeCtrl(nil))
			show(m, sceneBig(30, 200))
			press(m, tt.keys...)
			var cursorRow string
			for _, l := range strings.Split(drawn(m), "\n") {
				if strings.HasPrefix(l, "▸") {
					cursorRow = strings.Fields(strings.TrimPrefix(l, "▸"))[0]
				}
			}
			if cursorRow != tt.wantRow {
				t.Fatalf("cursor row on screen = %q, want %q\n%s", cursorRow, tt.wantRow, drawn(m))
			}
		})
	}
}

// TestFilterPromptDrawsItsCursorWhereItEdits holds the header to the
// textinput's cursor: a letter typed after two lefts lands before them.
func TestFilterPromptDrawsItsCursorWhereItEdits(t *testing.T) {
	t.Parallel()
	m := testModel(120, 30, Options{ASCII: true}, newFakeCtrl(nil))
	show(m, sceneMidInference())
	press(m, "/", "q", "e", "n", "left", "left")
	if got := m.headerState().status; got != "/q_en" {
		t.Errorf("status %q, want the cursor after q: %q", got, "/q_en")
	}
	m.Update(tea.KeyPressMsg{Code: 'x', Text: "x", Mod: tea.ModAlt})
	if m.grid.query != "qen" {
		t.Errorf("query %q after alt+x, want qen", m.grid.query)
	}
}
