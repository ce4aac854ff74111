package setup

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/runner/ledger"
)

// FleetServers turns the config's servers, and the hosted endpoints of
// judges that name a url, into the fleet's server list. API keys are read
// from the environment here and go nowhere else.
func FleetServers(cfg *config.Config, getenv func(string) string) ([]gpu.ServerConfig, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []gpu.ServerConfig
	for _, s := range cfg.Servers {
		key := ""
		if s.APIKeyEnv != "" {
			key = getenv(s.APIKeyEnv)
			if key == "" {
				return nil, fmt.Errorf("%s: servers %q: api_key_env names %s, which is not set (export it, or remove api_key_env)", cfg.Path, s.Name, s.APIKeyEnv)
			}
		}
		out = append(out, gpu.ServerConfig{
			Config: client.Config{Name: s.Name, URL: s.URL, Kind: s.Kind, APIKey: key, MaxReplyBytes: cfg.Run.MaxReplyBytes},
			Slots:  s.Slots,
			GPUs:   s.GPUs,
			Models: s.Models,
			RPM:    s.RPM,
			TPM:    s.TPM,
		})
	}
	for _, j := range cfg.Scoring.Judges {
		if j.Server != "" || j.URL == "" {
			continue
		}
		key := ""
		if j.APIKeyEnv != "" {
			key = getenv(j.APIKeyEnv)
			if key == "" {
				return nil, fmt.Errorf("%s: scoring.judges %q: api_key_env names %s, which is not set (export it, or remove api_key_env)", cfg.Path, j.Name, j.APIKeyEnv)
			}
		}
		out = append(out, gpu.ServerConfig{
			Config: client.Config{Name: j.FleetServer(), URL: j.URL, Kind: chat.KindOpenAI, APIKey: key, MaxReplyBytes: cfg.Run.MaxReplyBytes},
			Slots:  4,
			Models: []string{j.Model},
		})
	}
	return out, nil
}

// A Simulator starts a config's kind = "sim" servers on loopback, points
// the config's URLs at them and returns what stops them. The simulator is an
// edge (edges/sim): the core only knows that one may be registered, so a
// build without it still reads and validates a config that names sim servers.
type Simulator func(cfg *config.Config, instant bool) (io.Closer, error)

var (
	simMu     sync.Mutex
	simulator Simulator
)

// RegisterSimulator makes s the one StartSims calls; cli registers
// edges/sim. A second registration replaces the first.
func RegisterSimulator(s Simulator) {
	simMu.Lock()
	defer simMu.Unlock()
	simulator = s
}

// StartSims starts the config's kind = "sim" servers with the registered
// simulator. It returns nil, and starts nothing, when the config has none;
// the caller closes what it returns.
func StartSims(cfg *config.Config, instant bool) (io.Closer, error) {
	i := slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Kind == chat.KindSim })
	if i < 0 {
		return nil, nil
	}
	simMu.Lock()
	start := simulator
	simMu.Unlock()
	if start == nil {
		return nil, fmt.Errorf("%s: servers %q: kind = \"sim\", but this build has no simulator", cfg.Path, cfg.Servers[i].Name)
	}
	c, err := start(cfg, instant)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// RecordWarmups returns the fleet's warm-up hook: each warm-up is a ledger
// row of purpose warmup, written before it is sent and finished when it ends.
func RecordWarmups(led *ledger.Ledger, runID string) func(server, model string) func(chat.Result, error) {
	return func(server, model string) func(chat.Result, error) {
		now := time.Now()
		row := &ledger.Request{RunID: runID, Purpose: ledger.PurposeWarmup, Server: server, Model: model,
			Attempt: 1, Status: ledger.StatusRunning, QueuedAt: now, StartedAt: now}
		if _, err := led.InsertRequest(row); err != nil {
			return func(chat.Result, error) {}
		}
		return func(res chat.Result, err error) {
			row.End(time.Now(), res, err)
			_ = led.FinishRequest(row)
		}
	}
}
