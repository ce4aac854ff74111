// Package simspec describes simulated servers and models: the [sim]
// sections of a config, which the simulator (edges/sim) serves. It holds
// plain types only, so that config can read them without linking the
// simulator.
package simspec
