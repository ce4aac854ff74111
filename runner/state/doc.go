// Package state is the vocabulary of a run as its readers see it: the
// immutable BatteryRun snapshot with its rows and cells, judgments, the
// run's status and phase, one Tally of cells and verdicts, and the exit
// code a run earns.
//
// The runner produces these; the UI, the plain renderer, export and the
// command line read them. It holds no behaviour beyond counting and imports
// only the other vocabulary packages (gpu/chat, gpu/telemetry,
// judge/check, judge/scoring): no HTTP client, no ledger, no simulator.
package state
