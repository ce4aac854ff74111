// Package probe finds out what a server is and what it holds: whether it
// answers GET /models and with which models, which backend it is (LM
// Studio, Ollama, llama.cpp, vLLM, the simulator; DetectKind), and, from
// each backend's own endpoints, its resident models, slots, requests running
// and waiting, KV cache and GPUs. Every URL pitwall requests from a server
// is built by Endpoint, which keeps the base URL's query (Azure's
// ?api-version=) after every path.
//
// A probe that gets no answer says why in words, with credentials masked;
// a backend endpoint that fails only leaves its fields unknown. It imports
// only gpu/chat, gpu/telemetry and internal/redact.
package probe
