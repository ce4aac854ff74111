package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"

	"pitwall/runner"
	"pitwall/runner/state"
	"pitwall/ui"
)

// stopGrace is how long a headless run has to stop after the first
// interrupt before it is closed at once.
const stopGrace = 5 * time.Second

func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", "pitwall run [CONFIG] [flags]",
		"Runs every model on every test of the battery through the fleet (phase 1), then judges the\n"+
			"completed cells (phase 2). On a terminal the live grid opens; with --headless, or when stdout\n"+
			"is not a terminal, one line per finished cell goes to stderr and the final grid to stdout.", stderr)
	var cf commonFlags
	cf.register(fs)
	var g gates
	registerGates(fs, &g)
	cfg, code, ok := parseConfig(fs, &cf, args, stderr)
	if !ok {
		return code
	}
	if err := g.check(cfg); err != nil {
		return failf(stderr, err)
	}
	printWarnings(stderr, cfg)
	a, err := openApp(cfg, "", stderr)
	if err != nil {
		return failf(stderr, err)
	}
	defer a.Close()
	noteInterrupted(a.led, cfg.Path, stderr)
	run, err := runner.New(cfg, runner.Options{RunID: a.runID, Fleet: a.fleet, Ledger: a.led, Logger: a.log,
		RefreshJudges: cf.judgeRefresh})
	if err != nil {
		return failf(stderr, err)
	}
	if err := run.Start(); err != nil {
		return failf(stderr, err)
	}
	defer run.Close() // before the app's Close: the run writes to its ledger
	code = driveGated(run, a, &cf, &g, stdin, stdout, stderr)
	code = g.finish(a.led, run.Wait(context.Background()), code, stdout, stderr)
	return recordExit(a.led, run.ID(), code, stderr)
}

// session is a started run and what its end depends on: whether a signal
// stopped it decides the exit code.
type session struct {
	run         *runner.Run
	app         *app
	strict      bool
	gates       *gates      // nil: the run's own exit code
	interrupted atomic.Bool // the UI reads it too, for "q exits N"
}

// interrupt notes a ctrl+c or SIGTERM. One that stops a run still going
// makes the exit 130; after the run's end it changes nothing, so quitting
// a finished run's grid with ctrl+c exits with the run's own code.
func (s *session) interrupt() {
	select {
	case <-s.run.Done():
	default:
		s.interrupted.Store(true)
	}
}

func (s *session) exitCode(b *state.BatteryRun) int {
	if s.interrupted.Load() {
		return exitInterrupted
	}
	return s.gates.exitCode(b, state.ExitCode(b, s.strict))
}

// live runs the grid until the user quits, then prints the summary. SIGINT
// reaches the program as ui.ErrInterrupted; SIGTERM is caught here. Either
// stops the run as in a headless run (exit 130).
func (s *session) live(opts ui.Options, stdout, stderr io.Writer) int {
	sigterm := make(chan os.Signal, 1)
	signal.Notify(sigterm, syscall.SIGTERM)
	defer signal.Stop(sigterm)
	if s.app.intr.listen() {
		s.interrupt()
		s.run.Stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		last *state.BatteryRun
		err  error
	}
	ended := make(chan result, 1)
	go func() {
		last, err := ui.RunTUI(ctx, s.run.Snapshots(), controller{s.run}, opts)
		ended <- result{last, err}
	}()
	var res result
	for waiting := true; waiting; {
		select {
		case <-sigterm:
			s.interrupt()
			s.run.Stop()
			cancel()
		case res = <-ended:
			waiting = false
		}
	}
	select {
	case <-sigterm: // came as the program ended
		s.interrupt()
	default:
	}
	switch {
	case errors.Is(res.err, ui.ErrInterrupted):
		s.interrupt()
	case res.err != nil && !s.interrupted.Load():
		return failf(stderr, res.err)
	}
	// Quitting while the run goes on stops it (the grid already asked);
	// re-judging still in flight is cancelled and gives back the verdicts
	// it would have replaced.
	last := res.last
	s.run.Stop()
	s.run.Close()
	if b := s.run.Wait(context.Background()); b != nil {
		last = b
	}
	// The grid is gone with the alternate screen: leave the summary.
	fmt.Fprint(stdout, ui.Summary(last, last.Plan.InView, opts))
	return s.exitCode(last)
}

// plain prints progress lines and the final grid, and returns the last
// snapshot. The first interrupt stops the run (what is done stays in the
// ledger). A second one, or a run still going stopGrace later, closes it
// at once: the fleet cancels whatever it still holds, the run records its
// end, and the caller closes the ledger before the process exits (130).
// An interrupt after the run has ended changes nothing.
func (s *session) plain(opts ui.Options, stdout, stderr io.Writer) *state.BatteryRun {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	printed := make(chan *state.BatteryRun, 1)
	go func() { printed <- ui.RunPlain(s.run.Snapshots(), stdout, stderr, opts) }()

	interrupts, ended := sigs, s.run.Done()
	var grace <-chan time.Time
	if s.app.intr.listen() { // an interrupt during set-up: the first
		s.interrupted.Store(true)
		s.run.Stop()
		grace = time.After(stopGrace)
	}
	for {
		select {
		case last := <-printed:
			return last
		case <-ended:
			interrupts, ended, grace = nil, nil, nil
		case <-interrupts:
			if !s.interrupted.Swap(true) {
				fmt.Fprintln(stderr, "pitwall: stopping… (interrupt again to quit at once)")
				s.run.Stop()
				grace = time.After(stopGrace)
				continue
			}
			interrupts, grace = nil, nil
			s.closeNow()
		case <-grace:
			fmt.Fprintln(stderr, "pitwall: the run did not stop in 5s; quitting")
			interrupts, grace = nil, nil
			s.closeNow()
		}
	}
}

// closeNow ends a run without waiting for its work to wind down: closing
// the fleet first cancels what is queued and in flight at once, so Close
// returns as soon as the run has recorded its end. The snapshot channel
// closes with it, and the plain output ends.
func (s *session) closeNow() {
	s.app.fleet.Close()
	s.run.Close()
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// controller adapts a run to the UI's Controller, keeping the UI free of
// the runner's error returns (the run reports them in its status line).
type controller struct{ r *runner.Run }

func (c controller) Stop() { c.r.Stop() }
func (c controller) Rejudge(cells []state.CellRef, judge string) uint64 {
	return c.taken(c.r.Rejudge(cells, judge))
}
func (c controller) RejudgeAll(judge string) uint64 { return c.taken(c.r.RejudgeAll(judge)) }
func (c controller) SwitchJudge(name string) uint64 { return c.taken(c.r.SwitchJudge(name)) }

// taken notes err in the run's status line and says which snapshot shows
// the judge work the run took.
func (c controller) taken(err error) uint64 {
	c.r.Note(err)
	if b := c.r.Latest(); b != nil {
		return b.Seq
	}
	return 0
}
func (c controller) Export(format string) (string, error) { return c.r.Export(format) }
