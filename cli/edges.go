package cli

// The edges: packages of edges/ that import the core and register with it
// (as database/sql drivers do), so that the core reads on its own and links
// no foreign format, engine or simulator. cli is where they are wired in, and
// only here; a package that needs one in its tests imports it there.
//
// edges/importrun and edges/qualify are not registered: the import, resume,
// rejudge and qualify commands call them by name.

import (
	// javascript checks, run in goja (judge/check's ScriptEngine)
	_ "pitwall/edges/jsassert"
	"pitwall/gpu/client"
	// other tools' batteries (config's Format): BFCL's question files,
	// inspect's datasets, prompt-prix's JSON and JSONL, promptfoo's YAML
	// batteries and judge batteries
	_ "pitwall/edges/bfcl"
	_ "pitwall/edges/inspect"
	_ "pitwall/edges/promptfoo"
	_ "pitwall/edges/promptprix"

	// a provider's Batch API for batch = true judges (runner's BatchTransport)
	"pitwall/edges/batchapi"
	// the simulated fleet of kind = "sim" servers (runner/setup's Simulator)
	"pitwall/edges/sim"
	"pitwall/runner"
	"pitwall/runner/setup"
)

func init() {
	setup.RegisterSimulator(sim.Simulator)
	runner.RegisterBatchAPI(func(c *client.Client) runner.BatchTransport { return batchapi.New(c) })
}
