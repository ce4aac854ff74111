package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"pitwall/edges/qualify"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"pitwall/config"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
	"pitwall/ui"
)

func cmdQualify(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("qualify", "pitwall qualify CONFIG [--judge NAME|jury] [--samples N] [--min-accuracy F] [--format json] [--headless] [--yes] [flags]",
		"Measures the config's judges on its judge battery (tests with a fixed candidate output and the\n"+
			"verdict expected of a judge; see examples/judge-battery.toml): accuracy, precision and recall on\n"+
			"FAIL, Cohen's κ against the expected verdicts and between judges, self-consistency across\n"+
			"samples, the J-ERR rate, and tokens and time per verdict. No model is run. Every judge request\n"+
			"is recorded in the ledger under a run of its own. On a terminal a live grid shows the verdicts\n"+
			"as they come (rows the cases, columns the judges, ✓ the verdict expected, ✗ another) with each\n"+
			"judge's figures; q quits it and the tables are printed. With --headless, or when stdout is not a\n"+
			"terminal, progress lines go to stderr and the tables to stdout. Before a hosted judge (a url, or\n"+
			"a server of kind openai off this network) is sent anything, the estimated tokens and cost are\n"+
			"printed, and on a terminal confirmed ([y/N]; --yes does not ask).\n\n"+
			"Exit codes: 0 every judge qualified; 1 a judge's accuracy is below --min-accuracy, a judge\n"+
			"gave no verdict at all, or the grid was quit before every answer was in; 2 config or setup\n"+
			"error; 130 interrupted, or the estimate was not confirmed.", stderr)
	var cf commonFlags
	cf.register(fs, "judge", "tests", "db", "timeout", "time-scale", "max-wait", "ascii")
	fs.BoolVar(&cf.headless, "headless", false, "progress lines on stderr and the tables on stdout instead of the live grid")
	samples := atLeastOne{&cf.judgeSamples, "answers per judge per case"}
	fs.Var(samples, "samples", "`N` answers per judge per case (default [scoring] samples)")
	// run's name for the same count, kept working but not listed twice.
	fs.Var(alias{samples}, "judge-samples", "")
	yes := fs.Bool("yes", false, "send to hosted judges without asking (the estimate is printed all the same)")
	var minAcc float64
	fs.Func("min-accuracy", "exit 1 when a judge's accuracy is below this share (0.9 or 90%)", func(v string) error {
		f, err := parseShare(v)
		minAcc = f
		return err
	})
	format := fs.String("format", "text", "text (tables) or json")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "pitwall qualify: --format %q: use text or json\n", *format)
		return state.ExitSetup
	}
	if len(pos) > 1 {
		fmt.Fprintf(stderr, "pitwall qualify: one config at a time, not %d (%s)\n", len(pos), strings.Join(pos, " "))
		return state.ExitSetup
	}
	path := configPath(pos)
	if ok, err := config.CheckQualifyConfig(path); err != nil {
		return failf(stderr, err)
	} else if !ok {
		if _, err := os.Stat(path); err != nil {
			return failf(stderr, fmt.Errorf("%s: %w", path, err))
		}
		return failf(stderr, fmt.Errorf("%s does not name a judge battery (tests with candidate and expect): "+
			"qualify measures judges; see examples/judge-qualify.toml, or use `pitwall run` for a battery", path))
	}
	cfg, tests, err := config.LoadQualify(path, cf.overrides(fs), os.Getenv)
	if err != nil {
		return failf(stderr, err)
	}
	printWarnings(stderr, cfg) // what the judge battery holds that is not read
	if abs, err := filepath.Abs(cfg.Path); err == nil {
		cfg.Path = abs
	}
	if len(tests) == 0 {
		return failf(stderr, fmt.Errorf("%s: no test of the judge battery is left to qualify on (check --tests)", cfg.Path))
	}
	qo := qualifyFlags{minAcc: minAcc, asJSON: *format == "json", headless: cf.headless, ascii: cf.ascii, yes: *yes}
	return runQualify(cfg, tests, qo, stdin, stdout, stderr)
}

// qualifyFlags are the flags of `qualify` that shape its run and output.
type qualifyFlags struct {
	minAcc                       float64
	asJSON, headless, ascii, yes bool
}

// runQualify runs the qualification of cfg's judges and prints it.
func runQualify(cfg *config.Config, tests []config.JudgeTest, qo qualifyFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	var judges []config.Judge
	models := map[string]string{}
	for _, name := range cfg.JudgeNames() {
		if j, ok := cfg.Judge(name); ok {
			judges = append(judges, j)
			models[j.Name] = j.Model
		}
	}
	jobs := qualify.Jobs(cfg, tests, judges)
	// Before anything is opened or sent: a "no" leaves no run behind.
	if !confirmSpend(estimateQualify(cfg, jobs), models, isTerminal(stdin) && isTerminal(stderr), qo.yes, stdin, stderr) {
		fmt.Fprintln(stderr, "pitwall: not confirmed: nothing was sent")
		return exitInterrupted
	}
	a, err := openApp(cfg, "", stderr)
	if err != nil {
		return failf(stderr, err)
	}
	defer a.Close()
	k := max(cfg.Scoring.Samples, 1)
	started := time.Now()
	if err := qualify.StartRun(a.led, a.runID, cfg, tests, started); err != nil {
		return failf(stderr, err)
	}
	fmt.Fprintf(stderr, "pitwall: qualifying %s on %s × %d samples (%d requests), run %s\n",
		plural(len(judges), "judge"), plural(len(tests), "case"), k, len(jobs), a.runID)

	opts := qualify.Options{MinScore: cfg.Scoring.MinScore}
	if cfg.Scoring.Mode == scoring.ModeJury && len(judges) >= 2 {
		w := map[string]float64{}
		for _, j := range judges {
			w[j.Name] = j.Weight
		}
		opts.Jury = &qualify.JuryOptions{Aggregation: cfg.Scoring.Aggregation, DisagreementMax: cfg.Scoring.DisagreementMax,
			ReportDisagreement: cfg.Scoring.ReportDisagreement, Weights: w}
	}
	watch := newQualifyWatch(cfg, a.runID, tests, judges, opts, qo.minAcc, started)
	q := &qualify.Qualification{Cfg: cfg, Tests: tests, Judges: judges, Fleet: a.fleet, Led: a.led, RunID: a.runID,
		Backoff: qualifyBackoff, Watch: watch}
	var calls []qualify.Call
	var end qualifyEnd
	var runErr error
	if !qo.headless && isTerminal(stdout) && isTerminal(stdin) {
		uo := ui.Options{ASCII: qo.ascii || os.Getenv("TERM") == "dumb", NoColor: os.Getenv("NO_COLOR") != "",
			LogPath: a.logPath, Logger: a.log}
		calls, end, runErr = qualifyLive(q, watch, jobs, uo)
	} else {
		watch.progress = stderr
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		calls, runErr = q.Run(ctx, jobs)
		end.interrupted = ctx.Err() != nil && runErr == nil
		stop()
	}
	early := end.interrupted || end.stopped || end.uiErr != nil
	if early {
		fmt.Fprintf(stderr, "pitwall: %s: the figures below count only the cases every judge answered (%d of %d answers came back)\n",
			endWord(end), len(calls), len(jobs))
	}

	status, msg := string(state.RunCompleted), ""
	switch {
	case runErr != nil:
		status, msg = string(state.RunFailed), fmt.Sprintf("the ledger %s cannot be written: %v", a.led.Path(), runErr)
	case early:
		status, msg = string(state.RunStopped), endWord(end)
	}
	if err := a.led.FinishRun(a.runID, status, msg, time.Now()); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return failf(stderr, runErr)
	}

	cases := make([]qualify.Case, 0, len(tests))
	for _, t := range tests {
		if !early || everyJudgeAnswered(calls, judges, t.ID) {
			cases = append(cases, qualify.Case{ID: t.ID, Expect: t.Expect})
		}
	}
	rep := qualify.Figures(cases, calls, opts)
	out := qualifyOutput{Run: a.runID, Config: cfg.Path, Samples: k, MinScore: cfg.Scoring.MinScore,
		MinAccuracy: qo.minAcc, Report: rep, Models: models}
	if qo.minAcc > 0 {
		out.Below = rep.Below(qo.minAcc)
	}
	for _, j := range rep.Judges {
		if j.Verdicts > 0 && j.Errors == j.Verdicts {
			out.NoVerdict = append(out.NoVerdict, j.Judge)
		}
	}
	if qo.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return failf(stderr, err)
		}
	} else {
		printQualify(stdout, out, time.Since(started))
	}
	switch {
	case end.uiErr != nil:
		return failf(stderr, end.uiErr)
	case end.interrupted:
		return exitInterrupted
	case end.stopped || len(out.Below) > 0 || len(out.NoVerdict) > 0:
		return state.ExitFail
	}
	return state.ExitOK
}

// endWord says how a qualification ended early.
func endWord(e qualifyEnd) string {
	switch {
	case e.uiErr != nil:
		return "the grid failed"
	case e.interrupted:
		return "interrupted"
	}
	return "stopped"
}

// qualifyBackoff is the wait before retry n (1-based) of a transient
// failure: a run's, 250ms doubling up to 5s.
func qualifyBackoff(n int) time.Duration {
	if n > 5 {
		return 5 * time.Second
	}
	return min(250*time.Millisecond<<max(n-1, 0), 5*time.Second)
}

// everyJudgeAnswered reports whether every judge answered case id at
// least once.
func everyJudgeAnswered(calls []qualify.Call, judges []config.Judge, id string) bool {
	for _, j := range judges {
		if !slices.ContainsFunc(calls, func(c qualify.Call) bool { return c.Judge == j.Name && c.Case == id }) {
			return false
		}
	}
	return true
}

// qualifyOutput is what `qualify --format json` prints.
type qualifyOutput struct {
	Run         string            `json:"run"`
	Config      string            `json:"config"`
	Samples     int               `json:"samples"`
	MinScore    float64           `json:"min_score"`
	MinAccuracy float64           `json:"min_accuracy,omitempty"`
	Models      map[string]string `json:"models"`               // judge name → model
	Below       []string          `json:"below,omitempty"`      // judges under --min-accuracy
	NoVerdict   []string          `json:"no_verdict,omitempty"` // judges whose every answer was a J-ERR
	Report      qualify.Report    `json:"report"`
}

// printQualify prints the case grid (✓ a judge's voted verdict is the one
// expected, ✗ it is not), each judge's figures, and the pairs' agreement.
func printQualify(w io.Writer, o qualifyOutput, took time.Duration) {
	r := o.Report
	fmt.Fprintf(w, "qualify run %s · %s × %d samples · min_score %.2f\n\n", o.Run, plural(r.Cases, "case"), o.Samples, o.MinScore)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"case", "expect"}
	for _, j := range r.Judges {
		head = append(head, j.Judge)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range r.Rows {
		cols := []string{row.Case, strings.ToUpper(string(row.Expect))}
		for _, c := range row.Cells {
			mark := "✗ "
			if c.Correct {
				mark = "✓ "
			}
			v := strings.ToUpper(string(c.Verdict))
			if c.Verdict == scoring.Error {
				v = "J-ERR"
			}
			cols = append(cols, mark+v)
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head = []string{"judge", "model", "accuracy", "voted", "precision(FAIL)", "recall(FAIL)", "κ vs expected", "consistency", "J-ERR", "tokens/verdict", "time/verdict"}
	if o.MinAccuracy > 0 {
		head = append(head, "min "+pct(o.MinAccuracy))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, j := range r.Judges {
		model := o.Models[j.Judge]
		if model == "" {
			model = "—"
		}
		cons := "—"
		if j.ConsistencyCases > 0 {
			cons = fmt.Sprintf("%.2f (%d)", j.Consistency, j.ConsistencyCases)
		}
		cols := []string{j.Judge, model, fmt.Sprintf("%s (%d/%d)", pct(j.Accuracy), j.Correct, j.Verdicts), pct(j.VotedAccuracy),
			fmt.Sprintf("%.2f", j.PrecisionFail), fmt.Sprintf("%.2f", j.RecallFail), fmt.Sprintf("%.2f", j.Kappa.Kappa),
			cons, pct(j.ErrorRate), fmt.Sprintf("%.0f", j.TokensPerVerdict), j.TimePerVerdict.Round(time.Millisecond).String()}
		if o.MinAccuracy > 0 {
			cols = append(cols, "ok")
			if slices.Contains(o.Below, j.Judge) {
				cols[len(cols)-1] = "BELOW"
			}
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	tw.Flush()
	if len(r.Pairs) > 0 {
		fmt.Fprintln(w, "\nbetween judges, answer by answer:")
		for _, p := range r.Pairs {
			if p.Comparison.N == 0 {
				fmt.Fprintf(w, "  %s × %s: no answer both gave a verdict on\n", p.A, p.B)
				continue
			}
			fmt.Fprintf(w, "  %s × %s: agree on %s of %d, Cohen's κ %.2f\n", p.A, p.B, pct(p.Comparison.Agreement), p.Comparison.N, p.Comparison.Kappa)
		}
	}
	fmt.Fprintf(w, "\naccuracy is per answer; voted is per case after the vote over samples. took %s\n", took.Round(100*time.Millisecond))
	for _, n := range o.NoVerdict {
		fmt.Fprintf(w, "judge %s gave no verdict at all: check its server, model and max_tokens (`pitwall export %s --format json` has its answers)\n", n, o.Run)
	}
	if len(o.Below) > 0 {
		fmt.Fprintf(w, "below --min-accuracy %s: %s\n", pct(o.MinAccuracy), strings.Join(o.Below, ", "))
	}
}

// pct is a share as a percentage with one decimal where it matters.
func pct(x float64) string {
	s := fmt.Sprintf("%.1f%%", 100*x)
	return strings.Replace(s, ".0%", "%", 1)
}

// qualifyPlan is `validate` on a qualify config: what qualify would send.
func qualifyPlan(w io.Writer, cfg *config.Config, tests []config.JudgeTest) {
	k := max(cfg.Scoring.Samples, 1)
	names := cfg.JudgeNames()
	fmt.Fprintf(w, "%s: ok (a judge qualification: `pitwall qualify %s`)\n", cfg.Path, cfg.Path)
	fmt.Fprintf(w, "  name     %s\n", cfg.Name)
	fmt.Fprintf(w, "  battery  %s (a judge battery: %s with expected verdicts)\n", cfg.Battery, plural(len(tests), "case"))
	fmt.Fprintf(w, "  judges   %s", strings.Join(names, ", "))
	if cfg.Scoring.Mode == scoring.ModeJury && len(names) >= 2 {
		fmt.Fprintf(w, ", and their jury (%s)", cfg.Scoring.Aggregation)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  requests %d (%s × %s × %d samples)\n", len(names)*len(tests)*k, plural(len(names), "judge"), plural(len(tests), "case"), k)
	for _, s := range cfg.Servers {
		fmt.Fprintf(w, "  server   %s\n", describeServer(s))
	}
	for _, n := range names {
		j, _ := cfg.Judge(n)
		fmt.Fprintf(w, "  judge    %s = %s on %s\n", j.Name, j.Model, firstNonEmptyStr(j.FleetServer(), "any server that offers it"))
	}
	fmt.Fprintf(w, "  ledger   %s\n", ledgerShown(cfg.DB))
}

// ledgerRunIsQualify says whether a ledger run is a judge qualification.
func ledgerRunIsQualify(r ledger.RunRow) bool { return r.ScoringMode == qualify.Mode }
