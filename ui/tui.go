package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"pitwall/runner/state"

	tea "charm.land/bubbletea/v2"
)

// Controller is what the UI asks of a run; the runner implements it (and
// tests use a fake). The UI calls it from commands, never from Update, so a
// method may block for as long as it needs.
//
// Rejudge, RejudgeAll and SwitchJudge return once the run has taken the
// judge work, with the Seq of a snapshot that shows it (or 0 when there is
// none to wait for): until that snapshot arrives the screen still knows
// the work is there, so that s cancels it.
type Controller interface {
	Stop()
	Rejudge(cells []state.CellRef, judge string) (seq uint64) // judge "" = the one in view
	RejudgeAll(judge string) (seq uint64)
	SwitchJudge(name string) (seq uint64)          // the runner judges what that judge has not judged yet
	Export(format string) (path string, err error) // format: json, csv, md, html, junit, text
}

// Options are how the screen looks and what it reports.
type Options struct {
	ASCII   bool   // --ascii or TERM=dumb: ASCII glyphs
	NoColor bool   // NO_COLOR: no colours (glyphs alone carry meaning)
	LogPath string // where logs go while the TUI runs (shown in help)
	// Continued says the run was read back from the ledger to go on
	// (resume, retry): the headless output counts what its first snapshot
	// already holds finished, says how much that was in one line, and
	// lists only the cells and verdicts that finish from then on.
	Continued bool
	// ExitCode is the run's exit code (0/1/2) computed by the runner
	// package: the header's "q exits N" once the run is over, and the
	// summary's exit line. Nil shows neither.
	ExitCode func(last *state.BatteryRun) int
	// LedgerPath is where the run's ledger is, for the plain summary.
	LedgerPath string
	// Ledger answers what the screen reads from the run's ledger; nil
	// reads nothing (the views say where the whole text is).
	Ledger Ledger
	// Logger receives what the user asked for (stop, re-judge, export);
	// it should write to LogPath. Nil logs nothing: the UI never logs to
	// the screen.
	Logger *slog.Logger
}

// ErrInterrupted is what RunTUI returns when the program was interrupted:
// SIGINT from outside (kill -INT), or ctrl+c at the keyboard (after a y/N
// while the run goes, and then the run was asked to stop before the program
// ended). The caller stops the run as a headless interrupt would and exits
// 130: ctrl+c is SIGINT, one way.
var ErrInterrupted = tea.ErrInterrupted

// RunTUI runs the program until the user quits and returns the last snapshot
// it drew. Quitting while the run is going asks first, then stops the run
// through ctrl before returning. Cancelling ctx ends the program too. The
// screen it leaves is cleared: the caller prints Summary after it.
func RunTUI(ctx context.Context, snaps <-chan *state.BatteryRun, ctrl Controller, opts Options) (*state.BatteryRun, error) {
	return runTUI(ctx, snaps, ctrl, opts)
}

func runTUI(ctx context.Context, snaps <-chan *state.BatteryRun, ctrl Controller, opts Options, extra ...tea.ProgramOption) (*state.BatteryRun, error) {
	done := make(chan struct{})
	// The snapshot reader waits on done as well as on the channel, so it
	// ends with the program rather than waiting for the runner to close.
	defer close(done)
	m := newModel(snaps, ctrl, opts, done)
	popts := append([]tea.ProgramOption{tea.WithContext(ctx)}, extra...)
	p := tea.NewProgram(m, popts...)
	_, err := p.Run()
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return m.run, fmt.Errorf("ui: %w", ctx.Err())
		}
		return m.run, fmt.Errorf("ui: %w", err)
	}
	return m.run, nil
}
