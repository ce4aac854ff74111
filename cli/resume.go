package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"pitwall/config"
	"pitwall/edges/importrun"
	"pitwall/runner"
	"pitwall/runner/compare"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// continueFlags are the common flags of the commands that go on with a run
// in the ledger (resume, retry, rejudge): those that change how it is
// shown or how long requests may take, never which cells or judges run.
// The ledger is --db's, not the config's: the run goes on where it is.
var continueFlags = []string{"headless", "ascii", "strict", "timeout", "time-scale", "max-wait"}

func cmdResume(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("resume", "pitwall resume RUN|last [--headless] [flags]",
		"Continues a run that was stopped, or whose process died, under the same id: inference that\n"+
			"completed is taken from the ledger and never sent again; cells that were queued, running or\n"+
			"cancelled are sent; judge samples already answered come from the ledger. The run then ends\n"+
			"as if it had never stopped, in the live grid or headless, with the exit codes of `run`.\n"+
			"RUN is a run id, a unique prefix of one, or \"last\"; the run's config is loaded again from\n"+
			"where it was (its battery must still hold the run's tests).", stderr)
	var cf commonFlags
	cf.register(fs, continueFlags...)
	db := ledgerFlag(fs)
	id, code, ok := oneRun(fs, args, "resume", stderr)
	if !ok {
		return code
	}
	if row, done := completedRun(*db, id); done {
		// Nothing stopped it: resuming would only replay it and stretch
		// its duration.
		fmt.Fprintf(stdout, "pitwall: run %s completed: nothing to resume. `pitwall retry %s` runs its ⚠️ cells again; `pitwall rejudge %s` judges it again.\n",
			row.ID, row.ID, row.ID)
		return 0
	}
	return continueRun(fs, &cf, *db, id, runner.Again{Cancelled: true}, nil, stdin, stdout, stderr)
}

// completedRun reports whether run id of ledger db completed: nothing
// stopped it, so there is nothing to resume. A ledger or run it cannot read
// is left to continueRun, which says why.
func completedRun(db, id string) (ledger.RunRow, bool) {
	led, err := openLedger(db)
	if err != nil {
		return ledger.RunRow{}, false
	}
	defer led.Close()
	row, err := led.Run(id)
	return row, err == nil && row.Status == string(state.RunCompleted)
}

func cmdRetry(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("retry", "pitwall retry RUN|last [--errors] [--cancelled] [flags]",
		"Runs again, into the same run, the cells of a finished run that ended ⚠️ (--errors) or ⊘\n"+
			"(--cancelled); neither flag means both. The new attempts stand beside the old ones in the\n"+
			"ledger; completed cells are not sent again. Then judges what completed, as `run` does.", stderr)
	var cf commonFlags
	cf.register(fs, continueFlags...)
	db := ledgerFlag(fs)
	errs := fs.Bool("errors", false, "run the ⚠️ cells again (server or transport errors)")
	cancelled := fs.Bool("cancelled", false, "run the ⊘ cells again (cancelled by a stop)")
	id, code, ok := oneRun(fs, args, "retry", stderr)
	if !ok {
		return code
	}
	again := runner.Again{Errors: *errs, Cancelled: *cancelled}
	if !*errs && !*cancelled {
		again = runner.Again{Errors: true, Cancelled: true}
	}
	row, cells, read := retryCells(*db, id, again)
	if read && row.Status == string(state.RunCompleted) && len(cells) == 0 {
		// Going on would only replay the run and stretch its duration. The
		// exit code stays the run's, as a CI step that retries expects.
		fmt.Fprintf(stdout, "pitwall: run %s has no %s cells: nothing to retry, nothing sent.\n", row.ID, againWords(again))
		if row.ExitCode != nil {
			return *row.ExitCode
		}
		return 0
	}
	if !again.Errors {
		cells = nil // only a retry of ⚠️ cells lists them under the grid
	}
	return continueRun(fs, &cf, *db, id, again, cells, stdin, stdout, stderr)
}

// continueRun resumes run id of ledger db with again, on the fleet of its
// config, and shows it to its end as `run` does, listing again0 (the cells
// retry sends again, as they were) under the grid. fs holds cf's flags.
func continueRun(fs *flag.FlagSet, cf *commonFlags, db, id string, again runner.Again, again0 []retried, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, row, err := runConfig(db, id, cf.overrides(fs))
	if err != nil {
		return failf(stderr, err)
	}
	if row.Status == ledger.RunRunning {
		// Its process is alive (reading it would have closed a dead one):
		// say so before anything starts, and change nothing.
		return failf(stderr, fmt.Errorf("%s run %s: %w", fs.Name(), row.ID, ledger.Held(row, time.Now())))
	}
	if p, ok := importrun.Imported(row); ok {
		return failf(stderr, fmt.Errorf("run %s was imported from %s: pitwall sent none of its requests, so there is nothing to resume or retry: `pitwall show %s` and `pitwall export %s` read it", row.ID, p.Format, row.ID, row.ID))
	}
	a, err := openApp(cfg, row.ID, stderr)
	if err != nil {
		return failf(stderr, err)
	}
	defer a.Close()
	run, err := runner.Resume(cfg, row.ID, again, runner.Options{RunID: row.ID, Fleet: a.fleet, Ledger: a.led, Logger: a.log})
	if errors.Is(err, ledger.ErrHeld) {
		return failf(stderr, err) // it names the run, the process and what to do
	} else if err != nil {
		return failf(stderr, fmt.Errorf("continuing run %s: %w", row.ID, err))
	}
	defer run.Close() // before the app's Close: the run writes to its ledger
	a.log.Info("continuing run", "status", row.Status, "errors", again.Errors, "cancelled", again.Cancelled)
	code := drive(run, a, cf, stdin, stdout, stderr)
	if len(again0) > 0 {
		printRetried(stdout, again0, run.Wait(context.Background()))
	}
	return recordExit(a.led, row.ID, code, stderr)
}

// retryCells reads run id of ledger db and the cells retry with again
// would send, reading the ledger once; read is false when it cannot, and
// continueRun then says why.
func retryCells(db, id string, again runner.Again) (row ledger.RunRow, cells []retried, read bool) {
	led, err := openLedger(db)
	if err != nil {
		return ledger.RunRow{}, nil, false
	}
	defer led.Close()
	if row, err = led.Run(id); err != nil {
		return row, nil, false
	}
	b, err := history.LoadSnapshot(led, row.ID, "")
	if err != nil {
		return row, nil, false
	}
	return row, toRetry(b, again), true
}

// againWords names the cells again picks: "⚠️", "⊘" or "⚠️ or ⊘".
func againWords(again runner.Again) string {
	switch {
	case again.Errors && again.Cancelled:
		return "⚠️ or ⊘"
	case again.Errors:
		return "⚠️"
	}
	return "⊘"
}

// retried is a cell retry runs again and what it was before.
type retried struct {
	test, model, was string
	ti, mi, rep      int
}

// toRetry lists the cells of b that again runs again.
func toRetry(b *state.BatteryRun, again runner.Again) []retried {
	var out []retried
	for ti := range b.Tests {
		for mi := range b.Models {
			for r := range max(b.Repeat, 1) {
				c := b.Cell(ti, mi, r)
				if c == nil || !(again.Errors && c.Status == state.Errored || again.Cancelled && c.Status == state.Cancelled) {
					continue
				}
				out = append(out, retried{test: b.Tests[ti].ID, model: b.Models[mi], was: string(c.Status), ti: ti, mi: mi, rep: r})
			}
		}
	}
	return out
}

// printRetried marks the cells retry ran again (↻), with what each was and
// what it came to, under the grid that shows them among the others.
func printRetried(w io.Writer, cells []retried, b *state.BatteryRun) {
	if b == nil {
		return
	}
	fmt.Fprintf(w, "retried  %d cells (↻ ran again):\n", len(cells))
	for _, r := range cells {
		now := "?"
		if c := b.Cell(r.ti, r.mi, r.rep); c != nil {
			now = string(compare.OutcomeUnder(c, b.Plan.InView))
		}
		name := r.model + " × " + r.test
		if b.Repeat > 1 {
			name += fmt.Sprintf(" #%d", r.rep+1)
		}
		fmt.Fprintf(w, "  ↻ %s: %s → %s\n", name, r.was, now)
	}
}

// runConfig finds run id in ledger db (reading it settles a run whose
// process died) and loads the config it came from again, with ov and that
// ledger.
func runConfig(db, id string, ov config.Overrides) (*config.Config, ledger.RunRow, error) {
	led, err := openLedger(db)
	if err != nil {
		return nil, ledger.RunRow{}, err
	}
	row, err := led.Run(id)
	if err != nil {
		led.Close()
		return nil, row, err
	}
	path, err := history.ConfigPath(led, row.ID)
	led.Close()
	if err != nil {
		return nil, row, err
	}
	ov.DB = db
	cfg, err := config.Load(path, ov, os.Getenv)
	if err != nil {
		return nil, row, fmt.Errorf("run %s came from %s, which does not load now: %w", row.ID, path, err)
	}
	return cfg, row, nil
}

// interruptedScan bounds how far back noteInterrupted looks for the
// config's last run: it reads one row per run it passes.
const interruptedScan = 50

// noteInterrupted prints one line on w when the last run of the config at
// path (among the newest interruptedScan runs) was interrupted, saying how
// to resume it. `run` calls it before it starts a new run: reading the
// ledger is also what settles a run whose process died.
func noteInterrupted(led *ledger.Ledger, path string, w io.Writer) {
	runs, err := led.Runs(interruptedScan)
	if err != nil {
		return
	}
	for _, r := range runs {
		if p, err := history.ConfigPath(led, r.ID); err != nil || p != path {
			continue
		}
		if r.Status == ledger.RunInterrupted {
			fmt.Fprintf(w, "pitwall: the last run of this config, %s, was interrupted; `pitwall resume %s` continues it (starting a new run)\n", r.ID, r.ID)
		}
		return
	}
}
