package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/internal/outfile"
	"pitwall/runner/compare"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// gates are run's CI flags: --fail-under, --fail-on and --out.
//
// Without --fail-under or --fail-on a finished run exits 1 when any cell
// did not pass (state.ExitCode). With either, the gates decide instead, so
// that a battery can pass CI with known failures:
//
//  1. A run that did not complete (stopped, failed, interrupted, or with
//     cells cancelled or verdicts missing) keeps its own exit code: a gate
//     over part of a battery says nothing.
//  2. --fail-under RATE fails the run when the overall pass rate is below
//     RATE; --fail-under MODEL=RATE when that model's is. The pass rate is
//     the summary's: PASS over decided cells (PASS, FAIL, WARN and ⚠️
//     errors; judge errors and cancelled cells are left out). A model or a
//     run with no decided cell fails its gate.
//  3. --fail-on LEVEL fails the run when a test of severity LEVEL or above
//     (critical > warning > info; a test with no severity counts as info)
//     has a cell that did not pass: FAIL, ⚠️, J-ERR, not judged, or WARN
//     under --strict.
//  4. Otherwise the run exits 0.
type gates struct {
	overall  *float64
	perModel map[string]float64 // by model name as given
	order    []string           // perModel's names, in the order given
	failOn   string
	out      string
	outFmt   string

	severity map[string]string // test id → severity, set by check
	strict   bool
}

// severityRank orders the severities a battery can give a test.
var severityRank = map[string]int{"info": 1, "warning": 2, "critical": 3}

// registerGates puts --fail-under, --fail-on and --out on fs.
func registerGates(fs *flag.FlagSet, g *gates) {
	fs.Func("fail-under", "exit 1 when the pass rate is below RATE (0.8 or 80%); MODEL=RATE gates one model; repeat or comma-separate", g.setFailUnder)
	fs.Func("fail-on", "exit 1 only when a test of this severity or above did not pass: critical, warning or info", func(v string) error {
		v = strings.ToLower(strings.TrimSpace(v))
		if severityRank[v] == 0 {
			return fmt.Errorf("%q is not a severity: use critical, warning or info", v)
		}
		g.failOn = v
		return nil
	})
	fs.Func("out", "also write the run's report to FILE when it ends; the format is the extension's: "+
		".json, .csv, .md, .html, .xml (JUnit), .txt (json for - , stdout, or a device or FIFO without one)", func(v string) error {
		if v == "" {
			return errors.New("name the report's file, or - for stdout")
		}
		// Before the run, not after it: a directory or a folder that is
		// not there would otherwise cost the whole run's report.
		if _, err := outfile.Check(v); err != nil {
			return err
		}
		f, err := formatOf(v, history.FormatJSON)
		if err != nil {
			return err
		}
		g.out, g.outFmt = v, f
		return nil
	})
}

func (g *gates) setFailUnder(v string) error {
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		model, rate, hasModel := strings.Cut(item, "=")
		if !hasModel {
			rate, model = item, ""
		}
		f, err := parseShare(rate)
		if err != nil {
			return err
		}
		if !hasModel {
			g.overall = &f
			continue
		}
		if model = strings.TrimSpace(model); model == "" {
			return fmt.Errorf("%q names no model: write MODEL=RATE, e.g. qwen3-8b=0.8", item)
		}
		if g.perModel == nil {
			g.perModel = map[string]float64{}
		}
		if _, seen := g.perModel[model]; !seen {
			g.order = append(g.order, model)
		}
		g.perModel[model] = f
	}
	return nil
}

// parseShare reads a share of 1: "0.8" or "80%".
func parseShare(v string) (float64, error) {
	s := strings.TrimSpace(v)
	percent := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err == nil && percent {
		f /= 100
	}
	if err != nil || !(f >= 0 && f <= 1) { // NaN too
		return 0, fmt.Errorf("%q is not a rate: give a share such as 0.8, or a percentage such as 80%%", v)
	}
	return f, nil
}

// active reports whether a gate decides the exit code. A nil *gates has
// none, so that commands without the flags can pass nil.
func (g *gates) active() bool {
	return g != nil && (g.overall != nil || len(g.perModel) > 0 || g.failOn != "")
}

// check reads what the gates need from the config before the run starts,
// and refuses a model gate for a model the run does not have.
func (g *gates) check(cfg *config.Config) error {
	g.strict = cfg.Run.Strict
	g.severity = make(map[string]string, len(cfg.Tests))
	for _, t := range cfg.Tests {
		g.severity[t.ID] = t.Severity
	}
	for _, m := range g.order {
		if _, ok := chat.MatchModel(cfg.Models, m); !ok {
			return fmt.Errorf("--fail-under %s=…: %s runs no model %q (its models: %s)", m, cfg.Path, m, strings.Join(cfg.Models, ", "))
		}
	}
	if g.failOn != "" {
		for _, t := range cfg.Tests {
			if t.Severity != "" {
				return nil
			}
		}
		if g.failOn != "info" {
			return fmt.Errorf("--fail-on %s: no test of %s's battery has a severity, so none is %s: "+
				"add severity = \"critical\" to the tests that must pass", g.failOn, cfg.Path, g.failOn)
		}
	}
	return nil
}

// exitCode is the exit code of a finished run under the gates, given the
// code it earns without them (see the rules on gates). It may be called
// again on its own result.
func (g *gates) exitCode(b *state.BatteryRun, code int) int {
	if !g.active() || b == nil || (code != state.ExitOK && code != state.ExitFail) || !complete(b) {
		return code
	}
	for _, r := range g.results(b) {
		if r.failed {
			return state.ExitFail
		}
	}
	return state.ExitOK
}

// complete reports whether a run completed with every cell run (none
// cancelled) and judged.
func complete(b *state.BatteryRun) bool {
	c := b.Counts
	return b.Status == state.RunCompleted && c.Done() == c.Cells() && c.Cancelled == 0 && c.Judged >= c.ToJudge
}

// gateResult is one gate's verdict on a run.
type gateResult struct {
	gate   string
	failed bool
	says   string
}

// results is every gate's verdict on a run, in the order the flags name
// them.
func (g *gates) results(b *state.BatteryRun) []gateResult {
	var out []gateResult
	if g.overall != nil {
		out = append(out, rateGate("--fail-under "+pct(*g.overall), "pass rate", outcomeCounts(b, ""), *g.overall))
	}
	for _, m := range g.order {
		name, ok := chat.MatchModel(b.Models, m)
		if !ok {
			out = append(out, gateResult{gate: "--fail-under " + m, failed: true, says: fmt.Sprintf("the run has no model %q", m)})
			continue
		}
		out = append(out, rateGate(fmt.Sprintf("--fail-under %s=%s", m, pct(g.perModel[m])), name+"'s pass rate",
			outcomeCounts(b, name), g.perModel[m]))
	}
	if g.failOn != "" {
		bad := g.failedAtSeverity(b)
		r := gateResult{gate: "--fail-on " + g.failOn, failed: len(bad) > 0,
			says: fmt.Sprintf("every test of severity %s or above passed", g.failOn)}
		if r.failed {
			r.says = fmt.Sprintf("%s of severity %s or above did not pass: %s", plural(len(bad), "test"), g.failOn, strings.Join(bad, ", "))
		}
		out = append(out, r)
	}
	return out
}

func rateGate(gate, what string, c compare.Counts, min float64) gateResult {
	if !c.Known() {
		return gateResult{gate: gate, failed: true, says: what + " unknown: " + c.RateNote()}
	}
	rate := float64(c.Pass) / float64(c.Decided)
	r := gateResult{gate: gate, failed: rate < min-1e-9}
	cmpWord := "at or above"
	if r.failed {
		cmpWord = "below"
	}
	r.says = fmt.Sprintf("%s %s (%d/%d) is %s %s", what, pct(rate), c.Pass, c.Decided, cmpWord, pct(min))
	return r
}

// failedAtSeverity lists the tests at or above the gate's severity with a
// cell that did not pass.
func (g *gates) failedAtSeverity(b *state.BatteryRun) []string {
	var bad []string
	for ti, t := range b.Tests {
		sev := g.severity[t.ID]
		if sev == "" {
			sev = "info"
		}
		if severityRank[sev] < severityRank[g.failOn] {
			continue
		}
		for _, c := range b.Rows[ti].Cells {
			o := cellOutcome(b, c)
			if o != compare.Pass && (o != compare.Warn || g.strict) {
				bad = append(bad, t.ID)
				break
			}
		}
	}
	return bad
}

// report prints every gate's verdict on a run, for the end of a headless
// run or a CI log.
func (g *gates) report(w io.Writer, b *state.BatteryRun) {
	if !g.active() || b == nil {
		return
	}
	if !complete(b) {
		fmt.Fprintf(w, "pitwall: gates not applied: the run is %s, not complete\n", b.Status)
		return
	}
	for _, r := range g.results(b) {
		word := "passed"
		if r.failed {
			word = "FAILED"
		}
		fmt.Fprintf(w, "gate %s %s: %s\n", r.gate, word, r.says)
	}
}

// finish ends a run's command: it prints the gates' verdicts to stderr,
// writes --out (- to stdout), and returns the exit code (code as
// session.exitCode gave it). A report that cannot be written is exit 2.
func (g *gates) finish(led *ledger.Ledger, b *state.BatteryRun, code int, stdout, stderr io.Writer) int {
	if g == nil {
		return code
	}
	g.report(stderr, b)
	code = g.exitCode(b, code)
	if g.out == "" || b == nil || b.ID == "" {
		return code
	}
	var buf bytes.Buffer
	// The summary above said the run's code; a report that cannot be
	// written makes it 2, and the last line says so.
	if err := history.Write(&buf, led, []string{b.ID}, g.outFmt, ""); err != nil {
		return failf(stderr, fmt.Errorf("--out %s: %w (exit 2, not the summary's %d: the report was not written)", g.out, err, code))
	}
	if err := outfile.Write(g.out, stdout, buf.Bytes()); err != nil {
		return failf(stderr, fmt.Errorf("--out: %w (exit 2, not the summary's %d: the report was not written)", err, code))
	}
	fmt.Fprintf(stderr, "pitwall: wrote %s (%s)\n", g.out, g.outFmt)
	return code
}

// cellOutcome is what a cell of a snapshot came to under the judge in
// view, as compare and the export count it: a completed cell with no
// judge in view passed on its checks.
func cellOutcome(b *state.BatteryRun, c *state.Cell) compare.Outcome {
	return compare.OutcomeUnder(c, b.Plan.InView)
}

// outcomeCounts counts a snapshot's cells by outcome: one model's, or
// every model's with model "".
func outcomeCounts(b *state.BatteryRun, model string) compare.Counts {
	var n compare.Counts
	rep := max(b.Repeat, 1)
	for _, row := range b.Rows {
		for i := range row.Cells {
			c := row.Cells[i]
			if model != "" && (i/rep >= len(b.Models) || b.Models[i/rep] != model) {
				continue
			}
			v, _ := compare.Judged(c, b.Plan.InView)
			n.Add(cellOutcome(b, c), compare.ByJudge(b.Plan.InView, string(c.Status), v))
		}
	}
	return n
}
