// Package setup builds what a run needs from its config, once per process:
// the fleet's server list with API keys read from the environment
// (FleetServers), the config's kind = "sim" servers started by the
// simulator registered with RegisterSimulator (StartSims; the simulator is
// the edge edges/sim, which cli registers), and the hook that records
// warm-ups in the ledger (RecordWarmups).
//
// It wires; it decides nothing a run does, and no run state lives here.
package setup
