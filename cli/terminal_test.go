package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// hostileBattery names its tests with what a terminal would act on: a
// right-to-left override, isolates, an escape sequence that clears the
// screen, a NUL.
const hostileBattery = `
[[tests]]
id = "evil\u202Egnp.exe"
user = "Name a primary colour."

[[tests]]
id = "\u2066iso\u2069\u001b[2Jclear\u0000nul"
user = "What is 2 + 2?"
`

func TestHeadlessOutputShowsControlAndBidiCharactersAsEscapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "battery.toml", hostileBattery)
	config := writeFile(t, dir, "sim.toml", fmt.Sprintf(resumeSim, ""))
	code, stdout, stderr := pitwall(t, dir, []string{"PITWALL_SIM_TIME_SCALE=0.01"}, "run", config, "--headless")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
		for _, raw := range []string{"\u202e", "\u2066", "\u2069", "\x1b", "\x00"} {
			if strings.Contains(out, raw) {
				t.Errorf("%s holds a raw %q:\n%s", name, raw, out)
			}
		}
	}
	for _, esc := range []string{`evil\u202egnp.exe`, `\u2066iso\u2069\x1b[2Jclear\x00nul`} {
		if !strings.Contains(stderr, esc) {
			t.Errorf("the progress lines do not show %s:\n%s", esc, stderr)
		}
	}
	if !strings.Contains(stdout, `evil\u202e`) {
		t.Errorf("the grid does not show the test id escaped:\n%s", stdout)
	}
}

func TestErrorMessagesShowControlAndBidiCharactersAsEscapes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if code := failf(&buf, errors.New("battery b.toml: test \"a\u202eb\x1b[2J\": no such model")); code != 2 {
		t.Errorf("failf returned %d, want 2", code)
	}
	if got, want := buf.String(), "pitwall: battery b.toml: test \"a\\u202eb\\x1b[2J\": no such model\n"; got != want {
		t.Errorf("failf wrote %q, want %q", got, want)
	}
}

func TestShowHeadlessShowsControlAndBidiCharactersAsEscapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "battery.toml", hostileBattery)
	config := writeFile(t, dir, "sim.toml", fmt.Sprintf(resumeSim, ""))
	if code, _, stderr := pitwall(t, dir, []string{"PITWALL_SIM_TIME_SCALE=0.01"}, "run", config, "--headless"); code != 0 && code != 1 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	code, stdout, stderr := pitwall(t, dir, nil, "show", "last", "--headless")
	if code != 0 && code != 1 {
		t.Fatalf("show exited %d:\n%s", code, stderr)
	}
	for _, raw := range []string{"\u202e", "\u2066", "\x1b", "\x00"} {
		if strings.Contains(stdout, raw) {
			t.Errorf("show's grid holds a raw %q:\n%s", raw, stdout)
		}
	}
	if !strings.Contains(stdout, `evil\u202e`) {
		t.Errorf("show's grid does not show the test id escaped:\n%s", stdout)
	}
}
