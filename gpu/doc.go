// Package gpu is the fleet: the servers pitwall talks to and their
// OpenAI-compatible client (built on go-openai's types and client, with
// the chat body encoded here and temperature 0 put on the wire), slots, model residency and warm-ups, health and failover,
// backend probes (LM Studio, Ollama, llama.cpp, vLLM, the simulator), the
// provider Batch API, and the dispatcher that asks a placement.Policy where
// each job goes.
//
// It knows nothing of cells, tests, judges or the ledger: a Job is a chat
// request for a model, and a result is what the server said and how fast.
// Errors are classified here, once, at the edge where they are born, and
// every URL or credential in them is masked (internal/redact). It imports
// only its own sub-packages (chat, placement, telemetry) and internal's
// redact and textutil. The placement policy itself is gpu/placement; its
// simulation in virtual time is gpu/des, and the simulated servers gpu/sim.
package gpu
