// Package promptprix reads prompt-prix's batteries as pitwall's:
// {"prompts": [...]} in JSON and one prompt per line in JSONL (prompt.go),
// its expected block becoming deterministic checks (expected.go). The
// mapping rules are in the comments of ppPrompt and expectedChecks.
//
// It is an edge: it imports config and registers itself in init
// (register.go) as the format of {"prompts": [...]} files and of the JSONL
// lines no other format claims; config frames the lines and finishes the
// tests, nothing in the core imports it, and cli links it (cli/edges.go).
// BFCL's files, which prompt-prix also reads, are edges/bfcl's.
package promptprix
