package cli

import (
	"fmt"
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
// It is for a run read back from the ledger to go on (`resume`, `retry`);
// `run` ends the same way through driveGated.
func drive(run *runner.Run, a *app, cf *commonFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	return driveWith(run, a, cf, nil, true, stdin, stdout, stderr)
}

// driveGated is drive with the CI gates of `run` deciding the exit code.
func driveGated(run *runner.Run, a *app, cf *commonFlags, g *gates, stdin io.Reader, stdout, stderr io.Writer) int {
	return driveWith(run, a, cf, g, false, stdin, stdout, stderr)
}

// driveWith drives run; continued says it was read back from the ledger
// to go on (resume, retry), so the headless output lists only what finishes
// from now on.
func driveWith(run *runner.Run, a *app, cf *commonFlags, g *gates, continued bool, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &session{run: run, app: a, strict: a.cfg.Run.Strict, gates: g}
	opts := uiOptions(a, cf.ascii, s.exitCode)
	opts.Continued = continued
	opts.Ledger = screenLedger{cfg: a.cfg, led: a.led, runID: run.ID()}
	if !cf.headless && isTerminal(stdout) && isTerminal(stdin) {
		return s.live(opts, stdout, stderr)
	}
	return s.exitCode(s.plain(opts, stdout, stderr))
}

// uiOptions are the grid's and the plain output's options for a run on a.
func uiOptions(a *app, ascii bool, exitCode func(*state.BatteryRun) int) ui.Options {
	return ui.Options{ASCII: ascii || os.Getenv("TERM") == "dumb", NoColor: os.Getenv("NO_COLOR") != "",
		LogPath: a.logPath, LedgerPath: ledgerShown(a.cfg.DB), Logger: a.log, ExitCode: exitCode,
		Ledger: screenLedger{cfg: a.cfg, led: a.led, runID: a.runID}}
}

// otherRuns lists, for V, the other runs of a run's battery in the ledger,
// newest first.
func otherRuns(led *ledger.Ledger) func(*state.BatteryRun) ([]string, error) {
	return func(run *state.BatteryRun) ([]string, error) {
		rows, err := led.Runs(0)
		if err != nil {
			return nil, fmt.Errorf("listing runs: %w", err)
		}
		var ids []string
		for _, r := range rows {
			if r.ID != run.ID && r.Name == run.Name {
				ids = append(ids, r.ID)
			}
		}
		return ids, nil
	}
}

// loadRun reads a run for V, under its own judge in view.
func loadRun(led *ledger.Ledger) func(string) (*state.BatteryRun, error) {
	return func(id string) (*state.BatteryRun, error) { return history.LoadSnapshot(led, id, "") }
}
