package ui

import (
	"log/slog"
	"pitwall/runner/state"
	"time"

	tea "charm.land/bubbletea/v2"
)

// tickEvery paces spinners; the clock in the header moves with it.
const tickEvery = 125 * time.Millisecond

// readSnapshot waits for the next snapshot and then takes any that queued
// behind it, so that a slow screen skips intermediate states instead of
// falling behind; the newest one (the final one included) is always the one
// returned. The model re-arms it after each snapshot. It gives up when done
// closes, so it never outlives the program.
func readSnapshot(ch <-chan *state.BatteryRun, done <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		var run *state.BatteryRun
		select {
		case r, ok := <-ch:
			if !ok {
				return snapshotsClosedMsg{}
			}
			run = r
		case <-done:
			return nil
		}
		for {
			select {
			case r, ok := <-ch:
				if !ok {
					return snapshotMsg{run: run, closed: true}
				}
				run = r
			default:
				return snapshotMsg{run: run}
			}
		}
	}
}

func tick() tea.Cmd {
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// actions are the commands that ask the controller for something. They log
// what was asked: to the log file when there is one, never to the screen.
type actions struct {
	ctrl Controller
	log  *slog.Logger
}

func newActions(ctrl Controller, opts Options) actions {
	log := opts.Logger
	if log == nil {
		// Not slog.Default: it writes to stderr, which is the screen.
		log = slog.New(slog.DiscardHandler)
	}
	return actions{ctrl: ctrl, log: log}
}

func (a actions) stop() tea.Cmd {
	return func() tea.Msg {
		a.log.Info("ui: stop")
		a.ctrl.Stop()
		return stopSentMsg{}
	}
}

// stopAndQuit stops the run, then ends the program: quitting mid-run must
// not leave the run going with nobody watching.
func (a actions) stopAndQuit() tea.Cmd {
	return func() tea.Msg {
		a.log.Info("ui: stop and quit")
		a.ctrl.Stop()
		return tea.QuitMsg{}
	}
}

// stopAndInterrupt stops the run, then ends the program as SIGINT would:
// Run returns tea.ErrInterrupted.
func (a actions) stopAndInterrupt() tea.Cmd {
	return func() tea.Msg {
		a.log.Info("ui: interrupt")
		a.ctrl.Stop()
		return tea.InterruptMsg{}
	}
}

func (a actions) rejudge(cells []state.CellRef, judge string) tea.Cmd {
	return func() tea.Msg {
		a.log.Info("ui: re-judge cells", "cells", len(cells), "judge", judge)
		seq := a.ctrl.Rejudge(cells, judge)
		return rejudgeSentMsg{cells: len(cells), judge: judge, seq: seq}
	}
}

func (a actions) rejudgeAll(judge string) tea.Cmd {
	return func() tea.Msg {
		a.log.Info("ui: re-judge run", "judge", judge)
		seq := a.ctrl.RejudgeAll(judge)
		return rejudgeSentMsg{judge: judge, seq: seq}
	}
}

func (a actions) switchJudge(judge string) tea.Cmd {
	return func() tea.Msg {
		a.log.Info("ui: switch judge", "judge", judge)
		seq := a.ctrl.SwitchJudge(judge)
		return judgeSwitchedMsg{judge: judge, seq: seq}
	}
}

func (a actions) export(format string) tea.Cmd {
	return func() tea.Msg {
		path, err := a.ctrl.Export(format)
		if err != nil {
			a.log.Warn("ui: export failed", "err", err)
		} else {
			a.log.Info("ui: exported", "path", path)
		}
		return exportedMsg{path: path, err: err}
	}
}
