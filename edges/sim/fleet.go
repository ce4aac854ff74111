package sim

import (
	"errors"
	"fmt"
)

// Fleet is several simulated servers started together.
type Fleet struct {
	servers []*Server
}

// StartFleet starts a server per config; if one fails, it closes those it
// started and returns the error.
func StartFleet(cfgs []Config) (*Fleet, error) {
	f := &Fleet{}
	seen := make(map[string]bool, len(cfgs))
	for i, cfg := range cfgs {
		if cfg.Name != "" && seen[cfg.Name] {
			_ = f.Close()
			return nil, fmt.Errorf("sim fleet: server %d: name %q used twice (give each server its own name)", i, cfg.Name)
		}
		seen[cfg.Name] = true
		s, err := Start(cfg)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("sim fleet: server %d: %w", i, err)
		}
		f.servers = append(f.servers, s)
	}
	return f, nil
}

// Servers returns the fleet's servers in the order of their configs.
func (f *Fleet) Servers() []*Server {
	return append([]*Server(nil), f.servers...)
}

// Server returns the server named name, or nil.
func (f *Fleet) Server(name string) *Server {
	for _, s := range f.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

// Close closes every server of the fleet.
func (f *Fleet) Close() error {
	var errs []error
	for _, s := range f.servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
