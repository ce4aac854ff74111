package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// interrupts watches SIGINT and SIGTERM for as long as the app is open, so
// that no interrupt is lost and none is ignored, whatever the run's size.
// The phases (a run's progress, the grid, a re-judge) stop their work on
// the first interrupt on channels of their own; this watcher
//
//   - keeps an interrupt that came before any phase listened (set-up, the
//     ledger's first writes), which the phase then takes as its first;
//   - ends the process if a second interrupt, or a SIGTERM, has not ended
//     it within hardQuitAfter, and at once on a third: the fleet is closed
//     and the ledger given hardQuitFlush to write what it holds, then the
//     process exits 130 (what the ledger had acknowledged stays, as after a
//     SIGKILL) and says how to continue.
//
// Between phases (the last writes of a run, its exit code, the summary) a
// single interrupt does nothing, so it cannot lose the run's exit code.
type interrupts struct {
	sigs   chan os.Signal
	stderr io.Writer
	way    atomic.Pointer[wayOut] // set once the app is open
	exit   func(int)              // os.Exit; tests replace it

	hardAfter time.Duration // hardQuitAfter; tests shorten it

	listening atomic.Bool // a phase reads interrupts itself
	early     atomic.Bool // one came while none did
	count     atomic.Int32
	quitOnce  sync.Once
	stop      chan struct{}
}

// wayOut is what the hard way out does: the command that continues the
// run ("" when none), and the close of the fleet and the ledger.
type wayOut struct {
	resume   string
	closeAll func()
}

const (
	hardQuitAfter = 5 * time.Second
	hardQuitFlush = 3 * time.Second
)

// watchInterrupts starts watching the process's SIGINT and SIGTERM.
func watchInterrupts(stderr io.Writer) *interrupts {
	in := newInterrupts(stderr)
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go in.watch()
	return in
}

func newInterrupts(stderr io.Writer) *interrupts {
	return &interrupts{sigs: make(chan os.Signal, 4), stderr: stderr, exit: os.Exit,
		hardAfter: hardQuitAfter, stop: make(chan struct{})}
}

func (in *interrupts) watch() {
	var hard <-chan time.Time
	for {
		select {
		case <-in.stop:
			return
		case <-hard:
			in.quit()
			return
		case sig := <-in.sigs:
			n := in.count.Add(1)
			switch {
			case n == 1 && sig == os.Interrupt && !in.listening.Load():
				in.early.Store(true)
				fmt.Fprintln(in.stderr, "pitwall: stopping… (interrupt again to quit at once)")
			case n >= 3:
				in.quit()
				return
			case n >= 2 || sig == syscall.SIGTERM:
				if hard == nil {
					hard = time.After(in.hardAfter)
				}
			}
		}
	}
}

// listen says a phase now reads interrupts itself, and reports whether one
// came before it did: the phase then stops its work at once.
func (in *interrupts) listen() bool {
	if in == nil {
		return false
	}
	in.listening.Store(true)
	return in.early.Swap(false)
}

// quit is the way out when the run does not end in time.
func (in *interrupts) quit() {
	in.quitOnce.Do(func() {
		way := in.way.Load()
		if way == nil {
			way = &wayOut{closeAll: func() {}} // still opening: nothing to close
		}
		msg := "pitwall: quitting at once; the ledger keeps what it had written"
		if way.resume != "" {
			msg += "; continue with `" + way.resume + "`"
		}
		fmt.Fprintln(in.stderr, msg)
		done := make(chan struct{})
		go func() { way.closeAll(); close(done) }()
		select {
		case <-done:
		case <-time.After(hardQuitFlush):
		}
		in.exit(exitInterrupted)
	})
}

// close stops watching: an interrupt may end the process again.
func (in *interrupts) close() {
	if in == nil {
		return
	}
	signal.Stop(in.sigs)
	close(in.stop)
}
