package cli

// The edges are wired in here, and only here: each imports the core and
// registers with it, and the core imports none of them.

import (
	"pitwall/edges/batchapi"
	"pitwall/edges/sim"
	"pitwall/gpu"
	"pitwall/runner"
	"pitwall/runner/setup"
)

// --- h2's edges: the simulator, judge qualification, the provider Batch API ---

func init() {
	setup.RegisterSimulator(sim.Simulator)
	runner.RegisterBatchAPI(func(c *gpu.Client) runner.BatchTransport { return batchapi.New(c) })
}
