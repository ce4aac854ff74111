package config

import (
	"slices"

	"pitwall/gpu/sim"
)

// SimTimeScale is the simulator's time scale: sim.time_scale, overridden by
// PITWALL_SIM_TIME_SCALE and the flag; 1 (real time) when unset.
func (c *Config) SimTimeScale() float64 {
	if c.Sim.TimeScale > 0 {
		return c.Sim.TimeScale
	}
	return 1
}

// ModelSpec returns the simulated model called name: its [[sim.models]]
// entry, or, for a model that a sim server offers without an entry, a spec
// with only the name set, whose zero fields the simulator fills with its
// defaults (a model needs no entry to be simulated; entries are for tuning).
// ok is false when no sim server offers name.
func (c *Config) ModelSpec(name string) (sim.ModelSpec, bool) {
	for _, m := range c.Sim.Models {
		if m.Name == name {
			return m, true
		}
	}
	for _, s := range c.Servers {
		if s.Kind == KindSim && slices.Contains(s.Models, name) {
			return sim.ModelSpec{Name: name}, true
		}
	}
	return sim.ModelSpec{}, false
}

// JudgeNames returns the judges that score this run, in config order:
// none in deterministic mode, the judge in view (Scoring.Active, which
// --judge NAME sets) in judge mode, and every judge in jury mode.
// Scoring.Judges still lists every configured judge, for switching.
func (c *Config) JudgeNames() []string {
	switch c.Scoring.Mode {
	case ModeJudge:
		if c.Scoring.Active != "" {
			return []string{c.Scoring.Active}
		}
		if len(c.Scoring.Judges) > 0 {
			return []string{c.Scoring.Judges[0].Name}
		}
	case ModeJury:
		return c.allJudgeNames()
	}
	return nil
}

// Judge returns the configured judge called name.
func (c *Config) Judge(name string) (Judge, bool) {
	for _, j := range c.Scoring.Judges {
		if j.Name == name {
			return j, true
		}
	}
	return Judge{}, false
}

// Server returns the configured server called name.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}
