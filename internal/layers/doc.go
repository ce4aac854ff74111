// Package layers holds no code: its test checks the import rules of
// docs/architecture.md with `go list -deps`, so that the core never links an
// edge and the UI and config never link what they must not.
package layers
