// Package history reads runs back from the ledger: a run's snapshot for
// `show` (LoadSnapshot), its scoring plan (Plan), the config it came from
// (ConfigPath) and its exports (BuildExport, WriteExport).
//
// It only reads: nothing here writes to the ledger or sends a request, and
// it does not import the runner engine.
package history
