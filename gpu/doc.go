// Package gpu is the fleet: the servers pitwall talks to, their slots,
// model residency and warm-ups, health and failover, and the dispatcher that
// asks a placement.Policy where each job goes.
//
// It knows nothing of cells, tests, judges or the ledger: a Job is a chat
// request for a model, and a result is what the server said and how fast.
// It talks to each server through a gpu/client Client (the OpenAI wire,
// where errors are classified once, at the edge where they are born, with
// every URL or credential in them masked) and learns what a server is and
// holds through gpu/probe. It imports only its own sub-packages (chat,
// client, probe, placement, telemetry) and internal's redact and textutil.
// The placement policy itself is gpu/placement; its simulation in virtual
// time is gpu/des, and the simulated servers edges/sim.
package gpu
