// Package spec describes simulated servers and models: the [sim] sections of
// a config, which gpu/sim serves. It holds plain types only, so that config
// can read them without linking the simulator.
package spec
