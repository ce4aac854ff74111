// Package setup builds what a run needs from its config, once per process:
// the fleet's server list with API keys read from the environment
// (FleetServers), the simulated servers of kind = "sim" with the
// simulator's answer key (StartSims, SimAnswers), and the hook that records
// warm-ups in the ledger (RecordWarmups).
//
// It wires; it decides nothing a run does, and no run state lives here.
package setup
