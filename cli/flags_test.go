package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestABadFlagValueStopsBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	demo := demoPath(t)
	cases := []struct {
		name string
		args []string
		want string // in the last line of stderr
	}{
		{"repeat zero", []string{"run", demo, "--repeat", "0"}, `--repeat "0": give a whole number of runs per cell, 1 or more`},
		{"repeat negative", []string{"run", demo, "--repeat=-2"}, `--repeat "-2"`},
		{"repeat not a number", []string{"run", demo, "--repeat", "two"}, `--repeat "two"`},
		{"judge samples zero", []string{"run", demo, "--judge-samples", "0"}, `--judge-samples "0"`},
		{"timeout negative", []string{"run", demo, "--timeout", "-5s"}, "cannot be negative"},
		{"time scale negative", []string{"run", demo, "--time-scale", "-1"}, "not a time scale"},
		{"max wait negative", []string{"run", demo, "--max-wait", "-1m"}, "is negative"},
		{"fail under over one", []string{"run", demo, "--fail-under", "1.5"}, "not a rate"},
		{"fail on unknown", []string{"run", demo, "--fail-on", "fatal"}, "not a severity"},
		{"resume repeat", []string{"resume", "last", "--timeout", "x"}, "not a duration"},
		{"qualify samples zero", []string{"qualify", demo, "--samples", "0"}, `--samples "0"`},
		{"qualify alias zero", []string{"qualify", demo, "--judge-samples", "0"}, `--judge-samples "0"`},
		{"rejudge samples negative", []string{"rejudge", "last", "--samples", "-1"}, `--samples "-1"`},
		{"runs negative", []string{"runs", "-n", "-1"}, `-n "-1"`},
		{"compare by", []string{"compare", "last", "--by", "speed"}, `--by "speed": rank by rate or score`},
		{"compare level", []string{"compare", "last", "--level", "95"}, "--level 95: give a confidence level"},
		{"init probe timeout", []string{"init", "-o", "-", "--probe-timeout", "0s"}, "--probe-timeout 0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "ledger.db")
			var out, errOut bytes.Buffer
			args := append(tc.args, "--db", db)
			if tc.args[0] == "init" {
				args = tc.args
			}
			code := Main(args, nil, &out, &errOut)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errOut.String())
			}
			if got := lastLine(errOut.String()); !strings.Contains(got, tc.want) {
				t.Errorf("last line %q, want it to say %q; stderr:\n%s", got, tc.want, errOut.String())
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("a ledger was made at %s: work began before the flag was checked", db)
			}
			if out.Len() > 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}

func TestAFlagTypoSaysWhatWasMeantLastAndSkipsTheFullUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--hedless"}, "pitwall run: unknown flag --hedless; did you mean --headless?"},
		{[]string{"run", "--judge-sample", "3"}, "did you mean --judge-samples?"},
		{[]string{"show", "last", "--head"}, "did you mean --headless?"},
		{[]string{"export", "last", "--fromat", "csv"}, "did you mean --format?"},
		{[]string{"qualify", "--samplez", "3"}, "did you mean --samples?"},
		{[]string{"runs", "--jsn"}, "did you mean --json?"},
		{[]string{"run", "--zzzzzz"}, "pitwall run: unknown flag --zzzzzz"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			if code := Main(tc.args, nil, &out, &errOut); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			s := errOut.String()
			if got := lastLine(s); !strings.HasSuffix(got, tc.want) {
				t.Errorf("last line %q, want it to end %q", got, tc.want)
			}
			if n := strings.Count(s, "\n"); n > 3 {
				t.Errorf("%d lines on a typo, want the usage line, the pointer to --help and the error:\n%s", n, s)
			}
			if !strings.Contains(s, "--help lists the flags") {
				t.Errorf("no pointer to --help:\n%s", s)
			}
		})
	}
}

func TestHelpStillPrintsEveryFlag(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := Main([]string{"run", "--help"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"-headless", "-repeat N", "-judge-samples N", "-fail-under", "-out"} {
		if !strings.Contains(errOut.String(), "  "+f) {
			t.Errorf("run --help does not list %s:\n%s", f, errOut.String())
		}
	}
}

func TestQualifyHelpListsSamplesOnceAndTakesTheOtherName(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := Main([]string{"qualify", "--help"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := errOut.String()
	if !strings.Contains(help, "  -samples N") {
		t.Errorf("qualify --help does not list -samples:\n%s", help)
	}
	if strings.Contains(help, "-judge-samples") {
		t.Errorf("qualify --help lists -judge-samples as well as -samples:\n%s", help)
	}
	// The hidden name still parses: the error is about the config, not
	// the flag.
	errOut.Reset()
	code := Main([]string{"qualify", filepath.Join(t.TempDir(), "none.toml"), "--judge-samples", "3"}, nil, &out, &errOut)
	if code != 2 || strings.Contains(errOut.String(), "unknown flag") {
		t.Errorf("qualify --judge-samples 3: exit %d, stderr %q", code, errOut.String())
	}
}

// show RUN --vs OTHER prints the cells that changed between two runs of
// the demo, side by side, with what changed; --test and --model pick cells.
func TestShowVsPrintsTheChangedCellsSideBySide(t *testing.T) {
	t.Parallel()
	db, a := demoRun(t, 1)
	_, b := demoRun(t, 2)
	code, out, errOut := inproc(t, "show", a, "--vs", b, "--db", db, "--width", "120")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escape codes in output that is not a terminal:\n%q", out)
	}
	if !strings.Contains(out, a+" vs "+b) || !regexp.MustCompile(`\d+ cells? changed, \d+ unchanged of \d+ cells both runs have`).MatchString(out) {
		t.Fatalf("no heading or count:\n%s", out)
	}
	if !strings.Contains(out, "run "+a) || !strings.Contains(out, "run "+b) {
		t.Errorf("no reply columns:\n%s", out)
	}
	// Output that is not a terminal is measured by wcwidth (⚠️ one column),
	// as the screen is where the terminal does not say otherwise.
	for i, l := range strings.Split(out, "\n") {
		if w := ansi.WcWidth.StringWidth(l); w > 120 {
			t.Errorf("line %d is %d columns wide: %q", i+1, w, l)
		}
	}
	code, out, _ = inproc(t, "show", a, "--vs", b, "--db", db, "--test", "weather_tool", "--width", "100")
	if code != 0 || !strings.Contains(out, "weather_tool ×") || strings.Contains(out, "json_person ×") {
		t.Errorf("--test keeps other tests or none (exit %d):\n%s", code, out)
	}
	code, _, errOut = inproc(t, "show", a, "--test", "x", "--db", db)
	if code != 2 || !strings.Contains(lastLine(errOut), "--vs") {
		t.Errorf("--test without --vs: exit %d, %q", code, errOut)
	}
}
