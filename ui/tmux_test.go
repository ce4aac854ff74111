package ui

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// tmuxPane is a detached tmux pane on a server of its own, written to
// through its tty as the program in it would write, and asked where its
// cursor is.
type tmuxPane struct {
	t      *testing.T
	tmux   string
	socket string
	tty    *os.File
	probes int
}

func newTmuxPane(t *testing.T, width int) *tmuxPane {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; the check in a real terminal needs it")
	}
	p := &tmuxPane{t: t, tmux: tmux, socket: "pitwall-ui-test-" + strconv.Itoa(os.Getpid())}
	// The pane's program only holds the tty open; the test writes to it.
	p.cmd("new-session", "-d", "-x", strconv.Itoa(width), "-y", "10", "sleep 600")
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", p.socket, "kill-server").Run() })
	tty, err := os.OpenFile(p.cmd("display", "-p", "#{pane_tty}"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("opening the pane's tty: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	p.tty = tty
	return p
}

// cmd runs a tmux command on the pane's server, with no configuration and
// outside any tmux the test itself runs in.
func (p *tmuxPane) cmd(args ...string) string {
	p.t.Helper()
	c := exec.Command(p.tmux, append([]string{"-u", "-L", p.socket, "-f", os.DevNull}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") {
			c.Env = append(c.Env, kv)
		}
	}
	out, err := c.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		p.t.Fatalf("tmux %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// cursorAfter clears the pane, writes s from its top left corner and
// returns the column tmux's cursor is left in. The title the write ends
// with says when tmux has drawn all of it.
func (p *tmuxPane) cursorAfter(s string) int {
	p.t.Helper()
	p.probes++
	title := "probe-" + strconv.Itoa(p.probes)
	if _, err := p.tty.WriteString("\x1b[H\x1b[2J" + s + "\x1b]2;" + title + "\x07"); err != nil {
		p.t.Fatalf("writing to the pane: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		got, x, _ := strings.Cut(p.cmd("display", "-p", "#{pane_title} #{cursor_x}"), " ")
		if got == title {
			n, err := strconv.Atoi(x)
			if err != nil {
				p.t.Fatalf("tmux's cursor_x is %q", x)
			}
			return n
		}
	}
	p.t.Fatalf("tmux did not draw %q in 5s", s)
	return 0
}

// separatorColumns are the screen columns tmux draws each sep of line in.
func (p *tmuxPane) separatorColumns(line, sep string) []int {
	var cols []int
	for i := 0; ; {
		j := strings.Index(line[i:], sep)
		if j < 0 {
			return cols
		}
		i += j + len(sep)
		cols = append(cols, p.cursorAfter(line[:i])-1)
	}
}

// TestWarningLinesUpInTmux writes grid lines with ⚠️ cells into tmux, a
// terminal that draws ⚠️ one column wide and does not report mode 2027,
// and asks it where every separator landed: under the default rule, in the
// headless lines and on the screen alike, each row's sit in the header's
// columns, ✓ rows and ⚠️ rows the same. Lines padded by grapheme widths,
// the rule for a terminal that reports mode 2027, must not line up there,
// or tmux would not be telling the rules apart.
func TestWarningLinesUpInTmux(t *testing.T) {
	t.Parallel()
	p := newTmuxPane(t, 300)
	if w := p.cursorAfter("⚠️"); w != 1 {
		t.Skipf("tmux %s draws ⚠️ %d columns wide; this check is for a terminal that draws it one column wide, as wcwidth has it (tmux 3.3a does)",
			p.cmd("display", "-p", "#{version}"), w)
	}
	screen := func(reports ...tea.Msg) []string {
		m := testModel(120, 24, Options{}, nil)
		for _, r := range reports {
			m.Update(r)
		}
		show(m, sceneWarnings())
		return gridLines(m)
	}
	run := sceneWarnings()
	tests := []struct {
		name    string
		lines   []string
		linesUp bool
	}{
		{"headless", strings.Split(strings.TrimSuffix(RenderGrid(run, defaultJudge(run), false), "\n"), "\n"), true},
		{"screen, no report", screen(), true},
		{"screen, mode 2027 set", screen(tea.ModeReportMsg{Mode: ansi.ModeUnicodeCore, Value: ansi.ModeSet}), false},
	}
	for _, tt := range tests {
		var want []int
		warned, ok, off := 0, 0, 0
		for i, l := range tt.lines {
			got := p.separatorColumns(l, "│")
			if i == 0 {
				want = got
				continue
			}
			if strings.Contains(l, "⚠️") {
				warned++
			}
			if strings.Contains(l, "✓") {
				ok++
			}
			if !equalInts(got, want) {
				off++
				if !tt.linesUp {
					break // one is enough to tell the rules apart
				}
				t.Errorf("%s: line %d's separators are in tmux's columns %v, the header's in %v:\n%s\n%s", tt.name, i, got, want, tt.lines[0], l)
			}
		}
		if tt.linesUp && (warned == 0 || ok == 0) {
			t.Fatalf("%s: want ⚠️ cells and ✓ cells to compare, have %d and %d rows with them:\n%s", tt.name, warned, ok, strings.Join(tt.lines, "\n"))
		}
		if !tt.linesUp && off == 0 {
			t.Errorf("%s: every line is aligned in tmux, which draws ⚠️ one column wide; the check cannot tell the rules apart:\n%s", tt.name, strings.Join(tt.lines, "\n"))
		}
	}
}
