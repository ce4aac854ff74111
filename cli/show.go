package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"pitwall/config"
	"pitwall/runner"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
	"pitwall/ui"
)

func cmdShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("show", "pitwall show RUN [--headless] [flags]",
		"Opens a run from the ledger in the grid: browse, open cells, re-judge, switch judges, export.\n"+
			"With --headless, or when stdout is not a terminal, prints its grid and summary instead, then\n"+
			"the tests that did not pass (most severe first, with severity and category) and the battery's\n"+
			"warnings; its exit code is the one the run's process returned, when the ledger has it.\n"+
			"RUN is a run id, a unique prefix of one, or \"last\".", stderr)
	db := ledgerFlag(fs)
	judgeName := fs.String("judge", "", "whose verdicts to show (default: the run's own judge or jury)")
	headless := fs.Bool("headless", false, "print the grid instead of opening it")
	ascii := fs.Bool("ascii", false, "ASCII glyphs")
	vs := fs.String("vs", "", "print each cell that changed between RUN and this other run, their replies side by side")
	vsTests := fs.String("test", "", "with --vs: these tests' cells (comma-separated), changed or not")
	vsModels := fs.String("model", "", "with --vs: these models' cells (comma-separated), changed or not")
	width := new(int)
	fs.Var(atLeastZero{width, "columns"}, "width", "with --vs: the width to print at (default: the terminal's, or 120)")
	id, code, ok := oneRun(fs, args, "show", stderr)
	if !ok {
		return code
	}
	if *vs == "" && (*vsTests != "" || *vsModels != "") {
		return failf(stderr, fmt.Errorf("--test and --model pick the cells of --vs: name the other run with --vs RUN"))
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	if *vs != "" {
		defer led.Close()
		return showVersus(led, id, *vs, *judgeName, ui.VersusOptions{Tests: splitList(*vsTests), Models: splitList(*vsModels),
			Width: *width, ASCII: *ascii}, stdout, stderr)
	}
	b, err := history.LoadSnapshot(led, id, *judgeName)
	if err != nil {
		led.Close()
		return failf(stderr, err)
	}
	exitCode := func(b *state.BatteryRun) int { return state.ExitCode(b, false) }
	if *headless || !isTerminal(stdout) {
		defer led.Close()
		row, err := led.Run(b.ID)
		if err != nil {
			return failf(stderr, err)
		}
		if *judgeName == "" {
			// Under its own verdicts the run exits as its process did
			// (gates, interrupts); another judge's earn their own code.
			exitCode = func(b *state.BatteryRun) int { return exitOf(row, func() int { return state.ExitCode(b, false) }) }
		}
		fmt.Fprint(stdout, ui.RenderGrid(b, b.Plan.InView, *ascii))
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, ui.Summary(b, b.Plan.InView, ui.Options{ASCII: *ascii, LedgerPath: ledgerShown(*db), ExitCode: exitCode, Ledger: screenLedger{led: led, runID: b.ID}}))
		printNotPassed(stdout, b, history.RunRecord(row), runStrict(row))
		return exitCode(b)
	}
	// Re-judging needs the run's config (the prompts, the judges, the
	// fleet); without it the grid can still be browsed and exported.
	cfgPath, err := history.ConfigPath(led, b.ID)
	led.Close()
	if err == nil && b.Status == state.RunRunning {
		// Reading it did not find its process gone: that process judges
		// it, and a second writer of its verdicts would undo the first's.
		err = fmt.Errorf("run %s is still running in another pitwall; re-judge it once it has ended", b.ID)
	}
	opts := ui.Options{ASCII: *ascii || os.Getenv("TERM") == "dumb", NoColor: os.Getenv("NO_COLOR") != "",
		ExitCode: exitCode}
	var snaps <-chan *state.BatteryRun
	var ctrl ui.Controller
	if err == nil {
		var a *app
		var run *runner.Run
		if a, run, err = reopen(cfgPath, *db, b, *judgeName, stderr); err == nil {
			defer a.Close()
			defer run.Close() // before the app's Close: the run writes to its ledger
			opts.LogPath, opts.Logger, opts.LedgerPath = a.logPath, a.log, ledgerShown(*db)
			opts.Ledger = screenLedger{cfg: a.cfg, led: a.led, runID: b.ID}
			snaps, ctrl = run.Snapshots(), controller{run}
		}
	}
	if err != nil {
		snaps, ctrl = browseOnlySnapshot(b, err), browseOnly{db: *db, id: b.ID}
	}
	last, err := ui.RunTUI(context.Background(), snaps, ctrl, opts)
	if err != nil && !(errors.Is(err, ui.ErrInterrupted) && last != nil) {
		return failf(stderr, err)
	}
	// ctrl+c leaves a run that had ended as it was: its own exit code.
	return exitCode(last)
}

// showVersus prints the cells runs id and other share side by side (ui.RenderVersus).
func showVersus(led *ledger.Ledger, id, other, judge string, o ui.VersusOptions, stdout, stderr io.Writer) int {
	a, err := history.LoadSnapshot(led, id, judge)
	if err != nil {
		return failf(stderr, err)
	}
	b, err := history.LoadSnapshot(led, other, judge)
	if err != nil {
		return failf(stderr, fmt.Errorf("--vs: %w", err))
	}
	if o.Width == 0 {
		o.Width = 120
		if f, ok := stdout.(*os.File); ok && isTerminal(stdout) {
			if w, _, err := term.GetSize(f.Fd()); err == nil && w >= 60 {
				o.Width = w
			}
		}
	}
	o.JudgeA, o.JudgeB = a.Plan.InView, b.Plan.InView
	out := ui.RenderVersus(a, b, o)
	if !isTerminal(stdout) {
		out = ansi.Strip(out) // bold is for a terminal
	}
	fmt.Fprint(stdout, out)
	return 0
}

// splitList is a comma-separated flag's items.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// reopen brings run b back live from its config at cfgPath, with judge in
// view (when not ""), on an app of its own. An error says why the run can
// only be browsed; nothing is left open then.
func reopen(cfgPath, db string, b *state.BatteryRun, judge string, stderr io.Writer) (*app, *runner.Run, error) {
	cfg, err := config.Load(cfgPath, config.Overrides{DB: db}, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	a, err := openApp(cfg, b.ID, stderr)
	if err != nil {
		return nil, nil, err
	}
	run, err := runner.Reopen(cfg, b.ID, runner.Options{Fleet: a.fleet, Ledger: a.led, Logger: a.log})
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	// b was read with judge in view already; the reopened run has its own
	// plan's, so it is told (without judging: show only shows).
	if judge != "" {
		if err := run.ViewJudge(judge); err != nil {
			run.Close()
			a.Close()
			return nil, nil, err
		}
	}
	return a, run, nil
}

// browseOnlySnapshot is the one snapshot of a run that cannot be brought
// back live, saying why.
func browseOnlySnapshot(b *state.BatteryRun, why error) <-chan *state.BatteryRun {
	b.Message = "browse only: " + why.Error()
	snaps := make(chan *state.BatteryRun, 1)
	snaps <- b
	return snaps
}

// browseOnly is the controller of a run whose config cannot be loaded: it
// exports, and does nothing else.
type browseOnly struct{ db, id string }

func (browseOnly) Stop()                                  {}
func (browseOnly) Rejudge([]state.CellRef, string) uint64 { return 0 }
func (browseOnly) RejudgeAll(string) uint64               { return 0 }
func (browseOnly) SwitchJudge(string) uint64              { return 0 }

// Export writes the run's export beside the ledger, as runner.Run.Export
// does for a live run.
func (b browseOnly) Export(format string) (string, error) {
	led, err := ledger.OpenReadOnly(b.db)
	if err != nil {
		return "", err
	}
	defer led.Close()
	return exportBeside(led, b.id, "", format)
}
