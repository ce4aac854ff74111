package telemetry

import "time"

// ServerState is the fleet panel's view of one server at an instant.
type ServerState struct {
	Name       string
	Kind       string
	URL        string
	Up         bool
	DownReason string
	DownSince  time.Time // when it went down; zero while up
	// Stranded counts the queued jobs this server could run that no up
	// server can: they wait for it (or another like it) to come back.
	Stranded     int
	Slots        int
	Busy         int
	Queue        int      // jobs waiting that could run here
	Offered      []string // models it serves
	Resident     []string // models loaded now, when known
	Loading      string   // model being loaded, if any
	TokensPerSec float64  // recent decode rate across its slots
	GPUs         []GPUState
	// HeldUntil is set while the server is rate-limited: it answered 429
	// with a Retry-After, and the fleet sends it nothing new before then.
	HeldUntil time.Time
	// RetryAfter is the wait the server asked for, while HeldUntil is set.
	RetryAfter time.Duration
	// VRAMUsedGB and VRAMTotalGB are the server's memory as the fleet knows
	// it (probes, telemetry, the loads it made); 0 when unknown.
	VRAMUsedGB, VRAMTotalGB float64
}

// GPUState is one GPU's telemetry reading; a zero value field means unknown.
type GPUState struct {
	Index       int
	UUID        string
	Name        string
	UtilPct     float64
	MemUsedMiB  float64
	MemTotalMiB float64
	TempC       float64
	PowerW      float64
	At          time.Time
}
