package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/runner"
	"pitwall/runner/state"
)

// An interrupt (ctrl+c in the grid, SIGTERM) stops a run that is going
// and makes the exit 130; once the run has ended it changes nothing, and
// the exit is the run's own.
func TestAnInterruptAfterTheRunEndedKeepsItsExitCode(t *testing.T) {
	t.Parallel()
	cfg, a := openDemoApp(t)
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

// An interrupt that comes while the app is open, outside any phase that
// listens for it (as a run ends: its exit code, the summary, the ledger's
// close), does not end the process: the app holds it until Close. Not
// parallel: the signal goes to the whole test process, and no run of
// another test may be listening for it meanwhile. Without the hold, the
// signal's default action ends the test binary.
func TestAnOpenAppHoldsInterruptsUntilItsLedgerIsClosed(t *testing.T) {
	_, a := openDemoApp(t)
	held := a.held
	if held == nil {
		a.Close()
		t.Fatal("an open app holds no interrupts")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		a.Close()
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Error("the interrupt never reached the app's hold")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if a.held != nil {
		t.Error("a closed app still holds interrupts")
	}
}

// openDemoApp opens the app of the demo's config (seed 42) at time scale
// 0, its ledger in a temporary folder; the caller closes it.
func openDemoApp(t *testing.T) (*config.Config, *app) {
	t.Helper()
	dir := t.TempDir()
	scale := 0.0
	cfg, err := config.Load(demoConfig(t, dir, 42), config.Overrides{DB: filepath.Join(dir, "ledger.db"), TimeScale: &scale},
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg, mustOpenApp(t, cfg)
}

// mustOpenApp opens cfg's app, output discarded; the caller closes it.
func mustOpenApp(t *testing.T, cfg *config.Config) *app {
	t.Helper()
	a, err := openApp(cfg, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
