// Package runner is the run engine: it turns models × tests × repeats into
// cells, runs phase 1 (inference) through the fleet and phase 2 (judgment)
// through the judge package, retries transient errors, stops, re-judges and
// switches judges, records every request in the ledger before it is sent,
// and publishes immutable state.BatteryRun snapshots.
//
// One goroutine (the loop, loop.go) owns a run's state: fleet callbacks,
// retry timers and the methods users call post events on a queue that never
// blocks them, and the loop moves an explicit lifecycle (lifecycle.go).
// docs/architecture.md draws it.
//
// It never draws anything and never imports ui; reading finished runs back
// is runner/history's, and building the fleet from a config runner/setup's.
package runner
