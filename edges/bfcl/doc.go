// Package bfcl reads the question files of BFCL (the Berkeley Function
// Calling Leaderboard) as pitwall batteries: one entry per JSONL line or
// JSON array element, {"id", "question", "function"}, with ground_truth
// becoming checks when an entry carries it (bfcl.go). prompt-prix reads
// the same files; the mapping follows BFCL's own checker.
//
// It is an edge: it imports config and registers itself in init
// (register.go) as the format whose records have question or function;
// config frames the records and finishes the tests, nothing in the core
// imports it, and cli links it (cli/edges.go).
package bfcl
