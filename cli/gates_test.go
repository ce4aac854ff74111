package cli

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/config"
	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// gateRun builds a finished snapshot from a grid of marks, one string per
// test with one mark per model: P pass, F judge FAIL, W WARN, X failed
// checks, E ⚠️ error, J judge error, C cancelled. Models are m0, m1…, tests
// t0, t1…; the judge in view is "j".
func gateRun(status state.RunStatus, grid ...string) *state.BatteryRun {
	b := &state.BatteryRun{ID: "r", Status: status, Repeat: 1, Plan: scoring.Plan{Mode: scoring.ModeJudge, Judges: []string{"j"}, InView: "j"}}
	for mi := range len(grid[0]) {
		b.Models = append(b.Models, "m"+string(rune('0'+mi)))
	}
	for ti, row := range grid {
		test := "t" + string(rune('0'+ti))
		b.Tests = append(b.Tests, state.TestInfo{ID: test})
		r := &state.Row{}
		for mi, mark := range row {
			c := state.Cell{Model: b.Models[mi], Test: test, Status: state.Completed}
			verdict := map[rune]scoring.Verdict{'P': scoring.Pass, 'F': scoring.Fail, 'W': scoring.Warn, 'J': scoring.Error}[mark]
			switch mark {
			case 'X':
				c.Status = state.Failed
			case 'E':
				c.Status = state.Errored
			case 'C':
				c.Status = state.Cancelled
			}
			if verdict != "" {
				state.SetJudgment(&c, &state.Judgment{Judge: "j", Status: state.JudgmentDone, Verdict: verdict})
			}
			r.Cells = append(r.Cells, &c)
		}
		b.Rows = append(b.Rows, r)
	}
	b.Counts = state.TallyRows(b.Rows, "j")
	return b
}

// gatesFrom parses gate flags as run would, and checks them against a
// config with models m0, m1 and tests t0… of the given severities.
func gatesFrom(t *testing.T, severities []string, strict bool, args ...string) (*gates, error) {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g := &gates{}
	registerGates(fs, g)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg := &config.Config{Path: "pitwall.toml", Models: []string{"m0", "m1"}, Run: config.Run{Strict: strict}}
	for i, s := range severities {
		cfg.Tests = append(cfg.Tests, config.Test{ID: "t" + string(rune('0'+i)), Severity: s})
	}
	return g, g.check(cfg)
}

func TestGatesDecideTheExitCodeOfACompletedRun(t *testing.T) {
	t.Parallel()
	sev := []string{"critical", "warning", ""}
	cases := []struct {
		name   string
		args   []string
		strict bool
		run    *state.BatteryRun
		code   int // the code without gates
		want   int
	}{
		{"no gate keeps the code", nil, false, gateRun(state.RunCompleted, "PF", "PP", "PP"), 1, 1},
		{"overall rate met", []string{"--fail-under", "0.8"}, false, gateRun(state.RunCompleted, "PF", "PP", "PP"), 1, 0},
		{"overall rate missed", []string{"--fail-under", "90%"}, false, gateRun(state.RunCompleted, "PF", "PP", "PP"), 1, 1},
		{"rate counts ⚠️ and failed checks, not judge errors", []string{"--fail-under", "0.5"}, false,
			gateRun(state.RunCompleted, "PE", "PX", "JJ"), 1, 0}, // 2 of 4 decided
		{"a model's rate missed", []string{"--fail-under", "0.5,m1=0.7"}, false, gateRun(state.RunCompleted, "PF", "PP", "PF"), 1, 1},
		{"a model's rate met", []string{"--fail-under", "m0=1", "--fail-under", "m1=60%"}, false, gateRun(state.RunCompleted, "PF", "PP", "PP"), 1, 0},
		{"critical test failed", []string{"--fail-on", "critical"}, false, gateRun(state.RunCompleted, "PF", "PP", "PP"), 1, 1},
		{"only a warning test failed", []string{"--fail-on", "critical"}, false, gateRun(state.RunCompleted, "PP", "FP", "PE"), 1, 0},
		{"warning level counts it", []string{"--fail-on", "warning"}, false, gateRun(state.RunCompleted, "PP", "FP", "PE"), 1, 1},
		{"a test without severity is info", []string{"--fail-on", "info"}, false, gateRun(state.RunCompleted, "PP", "PP", "PE"), 1, 1},
		{"WARN passes a severity gate", []string{"--fail-on", "critical"}, false, gateRun(state.RunCompleted, "WP", "PP", "PP"), 1, 0},
		{"WARN fails it under strict", []string{"--fail-on", "critical"}, true, gateRun(state.RunCompleted, "WP", "PP", "PP"), 1, 1},
		{"judge error fails a severity gate", []string{"--fail-on", "critical"}, false, gateRun(state.RunCompleted, "JP", "PP", "PP"), 1, 1},
		{"both gates must pass", []string{"--fail-on", "critical", "--fail-under", "0.9"}, false, gateRun(state.RunCompleted, "PP", "FF", "PP"), 1, 1},
		{"a stopped run keeps its code", []string{"--fail-under", "0.1"}, false, gateRun(state.RunStopped, "PF", "PP", "PP"), 1, 1},
		{"a cancelled cell keeps the code", []string{"--fail-under", "0.1"}, false, gateRun(state.RunCompleted, "PC", "PP", "PP"), 1, 1},
		{"setup errors stay", []string{"--fail-under", "0.1"}, false, gateRun(state.RunFailed, "PP", "PP", "PP"), 2, 2},
		{"interrupt stays", []string{"--fail-under", "0.1"}, false, gateRun(state.RunCompleted, "PP", "PP", "PP"), 130, 130},
		{"nothing decided fails a rate", []string{"--fail-under", "0"}, false, gateRun(state.RunCompleted, "JJ", "JJ", "JJ"), 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := gatesFrom(t, sev, tc.strict, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			got := g.exitCode(tc.run, tc.code)
			if got != tc.want {
				var buf bytes.Buffer
				g.report(&buf, tc.run)
				t.Errorf("exit %d, want %d\n%s", got, tc.want, buf.String())
			}
			if again := g.exitCode(tc.run, got); again != got {
				t.Errorf("exitCode on its own result gave %d, then %d", got, again)
			}
		})
	}
}

// A run stopped before its judge decided anything has no pass rate in
// `runs` (— and null), though its checks failed some cells at once; once
// the judge decided some, the rate is of what was, with its bounds.
func TestRunsGivesNoRateWhereOnlyTheChecksFailuresAreIn(t *testing.T) {
	t.Parallel()
	// U: completed, never judged (not a mark gateRun knows).
	for _, c := range []struct {
		name string
		run  *state.BatteryRun
		text string
		rate bool
	}{
		{"stopped before judging", gateRun(state.RunStopped, "XU", "XU"), "—", false},
		{"stopped while judging", gateRun(state.RunStopped, "XU", "PU"), "25–75%", true},
		{"all judged", gateRun(state.RunCompleted, "XP", "PF"), "50%", true},
	} {
		n := outcomeCounts(c.run, "")
		if got := n.RateText(); got != c.text || (n.PassRate() != nil) != c.rate {
			t.Errorf("%s: rate %q (known %v); want %q (%v)", c.name, got, n.PassRate() != nil, c.text, c.rate)
		}
	}
}

// Commands that take no gate flags pass nil: nothing changes.
func TestNoGatesChangeNothing(t *testing.T) {
	t.Parallel()
	var g *gates
	b := gateRun(state.RunCompleted, "PF")
	if got := g.exitCode(b, 1); got != 1 {
		t.Errorf("nil gates: exitCode %d, want 1", got)
	}
	if got := g.finish(nil, b, 1, io.Discard, io.Discard); got != 1 {
		t.Errorf("nil gates: finish %d, want 1", got)
	}
}

func TestGateFlagsRefuseWhatTheyCannotGate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		sev  []string
		args []string
		want string
	}{
		{"rate above 1", []string{""}, []string{"--fail-under", "80"}, "is not a rate"},
		{"no model", []string{""}, []string{"--fail-under", "=0.5"}, "names no model"},
		{"unknown model", []string{""}, []string{"--fail-under", "m9=0.5"}, `runs no model "m9"`},
		{"unknown severity", []string{"critical"}, []string{"--fail-on", "fatal"}, "is not a severity"},
		{"no severities in the battery", []string{"", ""}, []string{"--fail-on", "critical"}, "no test of pitwall.toml's battery has a severity"},
		{"no extension", []string{""}, []string{"--out", "report"}, "no extension"},
		{"unknown extension", []string{""}, []string{"--out", "report.pdf"}, "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gatesFrom(t, tc.sev, false, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if g, err := gatesFrom(t, []string{""}, false, "--fail-on", "info", "--out", "r.XML"); err != nil || g.outFmt != history.FormatJUnit {
		t.Errorf("--fail-on info on a battery without severities, --out r.XML: %v, format %q", err, g.outFmt)
	}
}

// finish on a real run read back from the ledger: the gates' verdicts go
// to stderr and --out writes the report in its extension's format.
func TestGatesFinishWritesTheReportAndSaysWhy(t *testing.T) {
	t.Parallel()
	db, id := demoRun(t, 1)
	led, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	b, err := history.LoadSnapshot(led, id, "")
	if err != nil {
		t.Fatal(err)
	}
	n := outcomeCounts(b, "")
	rate := float64(n.Pass) / float64(n.Decided)
	out := filepath.Join(t.TempDir(), "junit.xml")
	g, err := gatesFrom(t, nil, false, "--fail-under", "0.5", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := g.finish(led, b, state.ExitCode(b, false), io.Discard, &stderr)
	want := 0
	if rate < 0.5 {
		want = 1
	}
	if code != want || !strings.Contains(stderr.String(), "gate --fail-under 50%") {
		t.Errorf("pass rate %.2f under --fail-under 0.5: exit %d, want %d; stderr:\n%s", rate, code, want, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Tests != 80 {
		t.Errorf("--out junit.xml: %v, %d tests; want JUnit XML of 80 tests", err, doc.Tests)
	}
}
