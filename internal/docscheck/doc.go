// Package docscheck holds the tests that keep the docs true to the code:
// every Go name, file and test command that README.md, docs/*.md and the
// packages' doc.go files cite must exist and run something
// (docs_test.go), and every pitwall command and flag, environment
// variable, make target, link, key, check type and config key the pages
// name must be one the code has, the reference tables listing all of
// them (pages_test.go); every TOML example must load as the battery, the
// config or the part of a config it shows (toml_test.go). It has no code
// of its own.
package docscheck
