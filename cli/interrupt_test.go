package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
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
// listens for it (set-up, or as a run ends: its exit code, the summary,
// the ledger's close), does not end the process, and is not lost: the
// next phase to listen takes it as its first. Not parallel: the signal
// goes to the whole test process. Without the watcher, the signal's
// default action ends the test binary.
func TestAnOpenAppKeepsAnInterruptForTheNextPhase(t *testing.T) {
	_, a := openDemoApp(t)
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		a.Close()
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !a.intr.early.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !a.intr.listen() {
		t.Error("the phase that listened after the interrupt was not told of it")
	}
	if a.intr.listen() {
		t.Error("an interrupt was told twice")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if a.intr != nil {
		t.Error("a closed app still watches interrupts")
	}
}

// A second interrupt, or a SIGTERM, that the run does not answer in time
// ends the process (130) after the ledger had its chance to write, with
// the command that continues the run; a third ends it at once.
func TestInterruptsTheRunDoesNotAnswerEndTheProcess(t *testing.T) {
	for _, tt := range []struct {
		name string
		sigs []os.Signal
	}{
		{"two interrupts", []os.Signal{os.Interrupt, os.Interrupt}},
		{"a SIGTERM", []os.Signal{syscall.SIGTERM}},
		{"three interrupts", []os.Signal{os.Interrupt, os.Interrupt, os.Interrupt}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out safeBuffer
			closed := make(chan struct{})
			in := newInterrupts(&out)
			in.way.Store(&wayOut{resume: "pitwall resume r1", closeAll: func() { close(closed) }})
			in.listening.Store(true) // a phase listens, and hangs
			in.hardAfter = 50 * time.Millisecond
			exited := make(chan int, 1)
			in.exit = func(code int) { exited <- code }
			go in.watch()
			defer in.close()
			for _, s := range tt.sigs {
				in.sigs <- s
			}
			select {
			case code := <-exited:
				if code != exitInterrupted {
					t.Errorf("exit %d, want %d", code, exitInterrupted)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the process was not ended")
			}
			select {
			case <-closed:
			default:
				t.Error("the process ended without closing the fleet and the ledger")
			}
			if !strings.Contains(out.String(), "pitwall resume r1") {
				t.Errorf("the way out said %q; want the command that continues the run", out.String())
			}
		})
	}
	// One interrupt a phase answers ends nothing.
	in := newInterrupts(io.Discard)
	in.listening.Store(true)
	in.hardAfter = 10 * time.Millisecond
	in.exit = func(int) { t.Error("one interrupt ended the process") }
	go in.watch()
	in.sigs <- os.Interrupt
	time.Sleep(100 * time.Millisecond)
	in.close()
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
