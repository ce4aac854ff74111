package ui

import (
	"pitwall/runner/compare"
	"pitwall/runner/state"
	"time"
)

// snapshotMsg carries the newest snapshot the reader found; closed says the
// channel closed right after it, so the reader is not re-armed.
type snapshotMsg struct {
	run    *state.BatteryRun
	closed bool
}

// snapshotsClosedMsg says the snapshot channel closed with nothing new.
type snapshotsClosedMsg struct{}

// tickMsg animates spinners and advances the clock while work is under way.
type tickMsg time.Time

// stopSentMsg says the controller took the stop.
type stopSentMsg struct{}

// rejudgeSentMsg says the controller took a re-judge of cells (0 = the
// run); seq is the snapshot that shows it.
type rejudgeSentMsg struct {
	cells int
	judge string
	seq   uint64
}

// judgeSwitchedMsg says the controller took a switch to judge; seq is the
// snapshot that shows it.
type judgeSwitchedMsg struct {
	judge string
	seq   uint64
}

// exportedMsg is the outcome of an export.
type exportedMsg struct {
	path string
	err  error
}

// rankedMsg is a ranking worked out by rankRun.
type rankedMsg struct {
	seq    uint64 // the snapshot it ranks
	judge  string
	live   bool // verdicts may still come
	judges int  // the run's judges, the jury apart
	cells  int  // cells ranked: what the filters keep
	tests  int  // tests kept, of allT
	models int  // models kept, of allM
	allT   int
	allM   int
	report *compare.Report
	err    error
}
