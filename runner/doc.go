// Package runner owns a battery run: it turns models × tests × repeats into
// cells, runs phase 1 (inference) through the fleet and phase 2 (judgment)
// through the judge package, retries transient errors, stops, re-judges and
// switches judges, records every request in the ledger, and publishes
// immutable state.BatteryRun snapshots for the UI and the plain renderer.
//
// It never draws anything and never imports ui.
package runner
