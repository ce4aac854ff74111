// Package state is the vocabulary of a run as its readers see it: the
// immutable BatteryRun snapshot with its rows and cells, judgments, the
// run's status and phase, one Tally of cells and verdicts, and the exit
// code a run earns.
//
// The runner produces these; the UI, the plain renderer, export and the
// command line read them. It holds no behaviour beyond counting and imports
// only the other vocabulary packages (gpu/chat, gpu/telemetry,
// judge/scoring, which holds a cell's check results too): no HTTP client,
// no ledger, no checks' engine, no simulator.
package state
