package cli

import (
	"io"
	"os"

	"pitwall/runner"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
	"pitwall/ui"
)

// drive shows a started run until it ends and returns its exit code: the
// live grid when stdin and stdout are terminals and --headless is not
// given, otherwise progress lines on stderr and the final grid on stdout.
// `run`, `resume` and `retry` end the same way through it.
func drive(run *runner.Run, a *app, cf *commonFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	return driveGated(run, a, cf, nil, stdin, stdout, stderr)
}

// driveGated is drive with the CI gates of `run` deciding the exit code.
func driveGated(run *runner.Run, a *app, cf *commonFlags, g *gates, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &session{run: run, app: a, strict: a.cfg.Run.Strict, gates: g}
	opts := uiOptions(a, cf.ascii, s.exitCode)
	opts.Whole = wholeCells(a.led, run.ID())
	if !cf.headless && isTerminal(stdout) && isTerminal(stdin) {
		return s.live(opts, stdout, stderr)
	}
	return s.exitCode(s.plain(opts, stdout, stderr))
}

// uiOptions are the grid's and the plain output's options for a run on a.
func uiOptions(a *app, ascii bool, exitCode func(*state.BatteryRun) int) ui.Options {
	return ui.Options{ASCII: ascii || os.Getenv("TERM") == "dumb", NoColor: os.Getenv("NO_COLOR") != "",
		LogPath: a.logPath, LedgerPath: ledgerShown(a.cfg.DB), Logger: a.log, ExitCode: exitCode, Spend: spendOf(a.led),
		Estimate: estimator(a.cfg, a.led, a.runID)}
}

// wholeCells reads cells of run id whole from the ledger, for the detail
// view: a live run's snapshots keep previews of long texts.
func wholeCells(led *ledger.Ledger, id string) func(state.CellRef) (*state.Cell, error) {
	return func(ref state.CellRef) (*state.Cell, error) { return history.LoadCell(led, id, ref) }
}
