// Package examples holds ready configs and batteries: the simulated demo
// (demo.toml), the reference fleet of the scheduling benchmark, and configs
// for LM Studio, Ollama, llama.cpp and vLLM. They are plain files a user
// copies and edits; the package embeds them so tests can check that every
// example loads.
package examples

import "embed"

// Files holds every example config and battery.
//
//go:embed *.toml
var Files embed.FS
