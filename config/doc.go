// Package config owns pitwall.toml: loading it, the precedence of flags over
// PITWALL_* environment variables over the file over defaults, validation
// with errors that name the file, line and field, and the battery loaders
// of pitwall's own formats (TOML and JSON). Other tools' formats are read by
// edges (edges/promptfoo, edges/promptprix, edges/bfcl, edges/inspect) that
// register a Format (format.go); config tells JSON, JSONL, TOML and other
// text apart, frames the one-test objects of JSON and JSONL files
// (records.go), asks the registered formats whose each file or object is,
// and finishes every format's tests alike.
//
// It decides nothing about running: it produces a resolved *Config that the
// runner and the fleet take as given.
//
// Every problem is an *Error naming file, line, field and what to change;
// Load and LoadBattery return all of them at once as Errors. The decoders
// give no positions for decoded values, so the package keeps a map from
// field paths (servers[1].slots) to lines of its own (locate_*.go), and
// checks unknown keys and types itself (shape.go) to report every one with
// its array index rather than the first without.
//
// A model on a sim server needs no [[sim.models]] entry: without one it is
// simulated with the simulator's defaults. An entry that no sim server
// offers is an error, since it is most likely a misspelt name whose
// settings would never apply.
package config
