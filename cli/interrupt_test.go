package cli

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"pitwall/config"
	"pitwall/runner"
	"pitwall/runner/state"
)

// An interrupt (ctrl+c in the grid, SIGTERM) stops a run that is going
// and makes the exit 130; once the run has ended it changes nothing, and
// the exit is the run's own.
func TestAnInterruptAfterTheRunEndedKeepsItsExitCode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scale := 0.0
	cfg, err := config.Load(demoConfig(t, dir, 42), config.Overrides{DB: filepath.Join(dir, "ledger.db"), TimeScale: &scale},
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a, err := openApp(cfg, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	run, err := runner.New(cfg, runner.Options{RunID: a.runID, Fleet: a.fleet, Ledger: a.led, Logger: a.log})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	s := &session{run: run, app: a, strict: cfg.Run.Strict}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	b := run.Wait(context.Background())
	own := state.ExitCode(b, s.strict)
	s.interrupt()
	if got := s.exitCode(b); got != own {
		t.Errorf("ctrl+c after the end: exit %d; want the run's own %d", got, own)
	}
	if own == exitInterrupted {
		t.Fatalf("the run's own code is %d already", own)
	}
}
