// Package gpu owns the fleet: the servers pitwall talks to, their
// OpenAI-compatible client (built on go-openai), slots, model residency, the
// scheduler that places jobs on slots, backend probes and GPU telemetry.
//
// It knows nothing of cells, tests, judges or the ledger: a job is a chat
// request for a model, and a result is what the server said and how fast.
// Errors are classified here, once, at the edge where they are born.
// It imports no other pitwall package.
package gpu
