// Package sim serves simulated OpenAI-compatible GPU servers on loopback:
// real HTTP and real SSE, OpenAI error bodies, each backend's state
// endpoints, GPUs with VRAM, models with sizes, load times and token rates,
// slots sharing a server's throughput, deterministic replies with a skill per
// test category, judge models that answer with reasoning and a VERDICT line,
// injected faults, and a time scale that shrinks every delay for tests (0
// makes every delay zero).
//
// Each backend reads a request as its real server does (dialect.go):
// which of tool_choice, n and max_completion_tokens it honours, whether it
// serves GET /v1/models/{id}, and the shape of its chunks and errors.
//
// It is the backbone of the demo, the tests and the benchmarks, and an edge:
// it imports the core's vocabulary (gpu/simspec, the [sim] config types) and
// nothing of the core imports it. The servers themselves read no pitwall
// package but simspec; config.go alone reads a config (StartConfig, the
// battery's answer key in Answers) and offers it as the core's
// setup.Simulator (Simulator), which cli registers.
package sim
