// Package config owns pitwall.toml: loading it, the precedence of flags over
// PITWALL_* environment variables over the file over defaults, validation
// with errors that name the file, line and field, and the battery loaders
// (the native TOML/JSON format and the importers).
//
// It decides nothing about running: it produces a resolved *Config that the
// runner and the fleet take as given.
package config
