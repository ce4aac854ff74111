package gpu

import (
	"pitwall/gpu/client"
	"pitwall/gpu/probe"
)

// ServerConfig is what the fleet needs to know of one server: how to reach
// and talk to it (the client's Config), and what it schedules there.
type ServerConfig struct {
	client.Config
	Slots int
	GPUs  []int
	// Models, when set, is the list of models the server offers, and the
	// fleet does not need to ask /v1/models.
	Models []string
	// RPM and TPM are the requests and tokens a minute the server allows
	// (a hosted API's rate limits); 0 when it sets none, or says its own
	// in its replies' headers (budget).
	RPM, TPM int
}

// ProbeTarget is what a probe of s needs to know of it.
func (s ServerConfig) ProbeTarget() probe.Server {
	return probe.Server{Name: s.Name, URL: s.URL, Kind: s.Kind, APIKey: s.APIKey, Models: s.Models}
}
