// Package ui draws a battery run: the live grid program (bubbletea v2) with
// its header, fleet panel, cell detail, judge picker and help, and the plain
// renderer used when there is no terminal (CI, --headless, show --headless),
// with the Summary printed under its grid or once the program exits.
//
// It reads state.BatteryRun snapshots and asks for actions through the
// Controller interface; it imports runner for those types alone, and
// runner/compare for the ranking the compare view (c) shows, and never talks
// to servers, the ledger or the judge itself.
package ui
