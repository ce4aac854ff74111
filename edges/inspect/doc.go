// Package inspect reads the datasets of inspect (UK AISI's evaluation
// framework) as pitwall batteries: one sample per JSONL line or JSON array
// element, {"id", "input", "target", "choices", "metadata"}, input becoming
// the prompt and target the judge's reference (sample.go).
//
// It is an edge: it imports config and registers itself in init
// (register.go) as the format whose records have input; config frames the
// records and finishes the tests, nothing in the core imports it, and cli
// links it (cli/edges.go).
package inspect
