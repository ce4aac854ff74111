package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"

	"pitwall/runner"
	"pitwall/runner/state"
	"pitwall/ui"
)

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", "pitwall run [CONFIG] [flags]",
		"Runs every model on every test of the battery through the fleet (phase 1), then judges the\n"+
			"completed cells (phase 2). On a terminal the live grid opens; with --headless, or when stdout\n"+
			"is not a terminal, one line per finished cell goes to stderr and the final grid to stdout.", stderr)
	var cf commonFlags
	cf.register(fs)
	cfg, code, ok := parseConfig(fs, &cf, args, stderr)
	if !ok {
		return code
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := openEnv(ctx, cfg, "", stderr)
	defer e.close()
	if err != nil {
		return failf(stderr, err)
	}
	run, err := runner.New(cfg, runner.Options{RunID: e.runID, Fleet: e.fleet, Ledger: e.led, Logger: e.log,
		RefreshJudges: cf.judgeRefresh})
	if err != nil {
		return failf(stderr, err)
	}
	if err := run.Start(); err != nil {
		return failf(stderr, err)
	}
	defer run.Close()

	strict := cfg.Run.Strict
	interrupted := make(chan struct{})
	exitOf := func(b *state.BatteryRun) int {
		select {
		case <-interrupted:
			return 130
		default:
			return state.ExitCode(b, strict)
		}
	}
	opts := ui.Options{ASCII: cf.ascii || os.Getenv("TERM") == "dumb", NoColor: os.Getenv("NO_COLOR") != "",
		LogPath: e.logPath, LedgerPath: cfg.DB, Logger: e.log, ExitCode: exitOf}

	if !cf.headless && isTerminal(stdout) && isTerminal(os.Stdin) {
		// SIGINT reaches the program as ErrInterrupted; SIGTERM is caught
		// here. Either stops the run as in a headless run (exit 130).
		var once sync.Once
		markInterrupted := func() { once.Do(func() { close(interrupted) }) }
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		defer signal.Stop(term)
		tctx, tcancel := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-term:
				markInterrupted()
				run.Stop()
				tcancel()
			case <-tctx.Done():
			}
		}()
		last, err := ui.RunTUI(tctx, run.Snapshots(), controller{run}, opts)
		tcancel()
		<-watched
		select {
		case <-term: // came as the program ended
			markInterrupted()
		default:
		}
		interruptedNow := false
		select {
		case <-interrupted:
			interruptedNow = true
		default:
		}
		switch {
		case errors.Is(err, ui.ErrInterrupted):
			markInterrupted()
		case err != nil && !interruptedNow:
			return failf(stderr, err)
		}
		// Quitting while the run goes on stops it (the grid already asked);
		// re-judging still in flight is cancelled and gives back the
		// verdicts it would have replaced.
		run.Stop()
		run.Close()
		if b := run.Wait(context.Background()); b != nil {
			last = b
		}
		// The grid is gone with the alternate screen: leave the summary.
		fmt.Fprint(stdout, ui.Summary(last, last.Plan.InView, opts))
		return exitOf(last)
	}

	// Headless: the first interrupt stops the run (what is done stays in
	// the ledger), a second one leaves at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
		case <-run.Done():
			return
		}
		close(interrupted)
		fmt.Fprintln(stderr, "pitwall: stopping… (interrupt again to quit at once)")
		run.Stop()
		select {
		case <-sigs:
			os.Exit(130)
		case <-run.Done():
		case <-time.After(5 * time.Second):
			fmt.Fprintln(stderr, "pitwall: the run did not stop in 5s; quitting")
			os.Exit(130)
		}
	}()
	last := ui.RunPlain(run.Snapshots(), stdout, stderr, opts)
	return exitOf(last)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// controller adapts a run to the UI's Controller, keeping the UI free of
// the runner's error returns (the run reports them in its status line).
type controller struct{ r *runner.Run }

func (c controller) Stop() { c.r.Stop() }
func (c controller) Rejudge(cells []state.CellRef, judge string) {
	c.r.Note(c.r.Rejudge(cells, judge))
}
func (c controller) RejudgeAll(judge string) { c.r.Note(c.r.RejudgeAll(judge)) }
func (c controller) SwitchJudge(name string) { c.r.Note(c.r.SwitchJudge(name)) }
func (c controller) Export() (string, error) { return c.r.Export() }
