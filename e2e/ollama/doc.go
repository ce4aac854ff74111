// Package ollama is an end-to-end suite that runs the pitwall binary against a
// real Ollama server (built from source by scripts/install-ollama.sh) serving
// tiny random-weight LLaMA models that the suite writes as GGUF files.
//
// It is opt-in (PITWALL_E2E=1, or PITWALL_OLLAMA_BIN naming a built ollama),
// because building Ollama takes minutes. Everything is in the _test.go
// files; see README.md for how to run it.
package ollama
