// Package ui draws what a run or a qualification shows: the live grid
// program (bubbletea v2) with its header, fleet panel, cell detail, judge
// picker, compare view (c), spend and help; the qualification grid
// (Qualify, for `pitwall qualify`); and the plain renderer used when there
// is no terminal (CI, --headless, show --headless), with the Summary printed
// under its grid or once the program exits.
//
// It reads state.BatteryRun snapshots and asks for actions through the
// Controller interface. It imports runner/state for the snapshots,
// judge/scoring for the verdicts and judge names they hold, gpu/telemetry
// for the fleet panel's server and GPU state, and runner/compare for the
// ranking the compare view shows; it never talks to servers, the ledger or
// a judge itself.
package ui
