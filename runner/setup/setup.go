package setup

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/gpu/sim"
	"pitwall/gpu/sim/spec"
	"pitwall/internal/redact"
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
		out = append(out, gpu.ServerConfig{Name: s.Name, URL: s.URL, Kind: s.Kind, Slots: s.Slots, GPUs: s.GPUs, APIKey: key,
			Models: s.Models, MaxReplyBytes: cfg.Run.MaxReplyBytes})
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
		out = append(out, gpu.ServerConfig{Name: j.FleetServer(), URL: j.URL, Kind: chat.KindOpenAI, Slots: 4, APIKey: key,
			Models: []string{j.Model}, MaxReplyBytes: cfg.Run.MaxReplyBytes})
	}
	return out, nil
}

// SimAnswers is the simulator's oracle for a battery: what a right answer
// to each test's prompt looks like, keyed by its last user message.
func SimAnswers(tests []config.Test) map[string]sim.Answer {
	out := make(map[string]sim.Answer, len(tests))
	for _, t := range tests {
		msgs := t.Conversation()
		last := ""
		for _, m := range msgs {
			if m.Role == "user" {
				last = m.Content
			}
		}
		a := sim.Answer{Category: t.Category, Content: t.Reference, JSON: t.ResponseFormat != nil && t.ResponseFormat.Type != "text"}
		if strings.HasPrefix(a.Content, "Expected:") {
			a.Content = "" // prompt-prix's expectation block is for the judge, not an answer
		}
		for _, c := range t.Checks {
			switch c.Type {
			case "tool-call":
				if a.ToolName == "" {
					a.ToolName, a.ToolArgs = c.Name, c.Args
				}
			case "equals", "regex":
				// A right answer to an exact check is that answer alone.
				a.Exact = true
				if a.Content == "" && c.Type == "equals" {
					a.Content = c.Value
				}
			case "contains", "icontains", "starts-with":
				if a.Content == "" {
					a.Content = c.Value
				}
			}
		}
		if a.Content == "" && a.ToolName == "" {
			a.Content = "Done."
		}
		out[last] = a
	}
	return out
}

// StartSims starts the config's kind = "sim" servers on loopback and points
// the config's URLs at them. The caller closes the returned fleet.
func StartSims(cfg *config.Config, instant bool) (*sim.Fleet, error) {
	catalog := map[string]spec.Model{}
	for _, m := range cfg.Sim.Models {
		catalog[m.Name] = m
	}
	answers := SimAnswers(cfg.Tests)
	var cfgs []sim.Config
	var idx []int
	for i, s := range cfg.Servers {
		if s.Kind != chat.KindSim {
			continue
		}
		addr := "127.0.0.1:0"
		if s.URL != "" {
			u, err := url.Parse(s.URL)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("%s: servers %q: url %q is not a URL (leave it out for a sim server)", cfg.Path, s.Name, redact.URL(s.URL))
			}
			host := u.Hostname()
			if host != "127.0.0.1" && host != "localhost" && !strings.HasPrefix(host, "127.") {
				return nil, fmt.Errorf("%s: servers %q: a sim server listens on loopback only, not %q", cfg.Path, s.Name, u.Host)
			}
			if u.Port() == "" {
				return nil, fmt.Errorf("%s: servers %q: url %q has no port: give one (http://127.0.0.1:8101/v1), or leave url out to get a free one", cfg.Path, s.Name, redact.URL(s.URL))
			}
			addr = u.Host
		}
		spec := spec.Server{}
		if s.Sim != nil {
			spec = *s.Sim
		}
		cfgs = append(cfgs, sim.Config{Name: s.Name, Addr: addr, Slots: s.Slots, Models: s.Models, Spec: spec,
			Catalog: catalog, TimeScale: cfg.SimTimeScale(), Instant: instant, Answers: answers, Seed: int64(cfg.Run.Seed)})
		idx = append(idx, i)
	}
	if len(cfgs) == 0 {
		return nil, nil
	}
	f, err := sim.StartFleet(cfgs)
	if err != nil {
		return nil, fmt.Errorf("starting the simulated fleet: %w", err)
	}
	for k, s := range f.Servers() {
		cfg.Servers[idx[k]].URL = s.URL()
	}
	return f, nil
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
