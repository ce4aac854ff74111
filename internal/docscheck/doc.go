// Package docscheck holds the test that keeps the docs true to the code:
// every Go name, file and test command that README.md, docs/*.md and the
// packages' doc.go files cite must exist and run something. It has no code
// of its own; see docs_test.go for what counts as a citation.
package docscheck
