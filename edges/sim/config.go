package sim

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/gpu/simspec"
	"pitwall/internal/redact"
)

// Answers is the simulator's oracle for a battery: what a right answer
// to each test's prompt looks like, keyed by its last user message.
func Answers(tests []config.Test) map[string]Answer {
	out := make(map[string]Answer, len(tests))
	for _, t := range tests {
		msgs := t.Conversation()
		last := ""
		for _, m := range msgs {
			if m.Role == "user" {
				last = m.Content
			}
		}
		a := Answer{Category: t.Category, Content: t.Reference, JSON: t.ResponseFormat != nil && t.ResponseFormat.Type != "text",
			Agent: t.Mode == config.ModeAgent}
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

// StartConfig starts the config's kind = "sim" servers on loopback and points
// the config's URLs at them. The caller closes the returned fleet.
func StartConfig(cfg *config.Config, instant bool) (*Fleet, error) {
	catalog := map[string]simspec.Model{}
	for _, m := range cfg.Sim.Models {
		catalog[m.Name] = m
	}
	answers := Answers(cfg.Tests)
	var cfgs []Config
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
		sp := simspec.Server{}
		if s.Sim != nil {
			sp = *s.Sim
		}
		cfgs = append(cfgs, Config{Name: s.Name, Addr: addr, Slots: s.Slots, Models: s.Models, Spec: sp,
			Catalog: catalog, TimeScale: cfg.SimTimeScale(), Instant: instant, Answers: answers, Seed: int64(cfg.Run.Seed)})
		idx = append(idx, i)
	}
	if len(cfgs) == 0 {
		return nil, nil
	}
	f, err := StartFleet(cfgs)
	if err != nil {
		return nil, fmt.Errorf("starting the simulated fleet: %w", err)
	}
	for k, s := range f.Servers() {
		cfg.Servers[idx[k]].URL = s.URL()
	}
	return f, nil
}

// Simulator is StartConfig as the core's setup.Simulator, which cli registers.
func Simulator(cfg *config.Config, instant bool) (io.Closer, error) {
	f, err := StartConfig(cfg, instant)
	if f == nil {
		// A nil *Fleet in an io.Closer would not compare equal to nil.
		return nil, err
	}
	return f, err
}
