package gpu

import (
	"cmp"
	"maps"
	"slices"

	"pitwall/gpu/chat"
)

// Names. The fleet speaks of a model by the name its jobs give it (the
// config's): placement, residency, loads, slots, the warm-up hook. A server
// may list that model under another spelling (Ollama's "m:latest", LM
// Studio's "publisher/m", another case), and two servers may spell it two
// ways. chat.MatchModel decides, once per server and name, whether the
// server offers the model and by which of its names; that spelling goes on
// the wire only, in the requests sent to that server. What a server reports
// in its own spelling (the models it holds) is read back into the fleet's
// names. Each server keeps its table (fleetServer.listed, sends, back),
// made again when its list changes and extended when a job brings a name
// the fleet has not met.

// learnLocked makes model a name every server answers for, the first time
// a job or the options bring it.
func (f *Fleet) learnLocked(model string) {
	if model == "" || f.names[model] {
		return
	}
	f.names[model] = true
	for _, s := range f.servers {
		s.learn(model)
	}
	if _, known := f.models[model]; known {
		return
	}
	// What the options know of a model under a server's spelling of it
	// (the simulator's catalogue names models as its servers list them)
	// holds for the fleet's name: the first server, by name, decides.
	for _, s := range slices.SortedFunc(slices.Values(f.servers), byServerName) {
		if as := s.sends[model]; as != "" {
			if mv, ok := f.opts.Models[as]; ok {
				f.models[model] = mv
				return
			}
		}
	}
}

func byServerName(a, b *fleetServer) int { return cmp.Compare(a.cfg.Name, b.cfg.Name) }

// setOffered takes the server's own list of its models and makes its table
// again for every name the fleet has met.
func (s *fleetServer) setOffered(models []string) {
	s.listed = slices.Clone(models)
	if s.listed == nil {
		s.listed = []string{}
	}
	s.offered = make(map[string]bool, len(s.sends))
	s.back = make(map[string][]string, len(s.sends))
	for _, name := range slices.Sorted(maps.Keys(s.sends)) {
		s.resolve(name)
	}
}

// learn adds name to the server's table: resolved now when its list is
// known, else when it is (setOffered).
func (s *fleetServer) learn(name string) {
	if _, met := s.sends[name]; met {
		return
	}
	s.sends[name] = ""
	if s.listed != nil {
		s.resolve(name)
	}
}

// resolve decides whether the server offers name, and by which of its names.
func (s *fleetServer) resolve(name string) {
	as, ok := chat.MatchModel(s.listed, name)
	if !ok {
		s.sends[name] = ""
		return
	}
	s.sends[name], s.offered[name] = as, true
	s.back[as] = append(s.back[as], name)
	// The server may have reported the model held, in its spelling, before
	// the fleet met the name (a probe at discovery, before any job).
	if as != name && s.res.has(as) {
		if _, fleetName := s.sends[as]; !fleetName {
			s.res.rename(as, name)
		} else {
			s.res.alias(as, name)
		}
	}
}

// sendAs is the name to send the server for the fleet's name model: the
// one it lists; model itself when the server does not offer it (the
// server's answer then says so).
func (s *fleetServer) sendAs(model string) string {
	if as := s.sends[model]; as != "" {
		return as
	}
	return model
}

// SendAs is the name to send server for the model the fleet's jobs call
// model: the one the server lists it by, or model itself when the server
// does not offer it or its list is not known. It is for requests that do
// not go through the fleet (a judge's Batch API file).
func (f *Fleet) SendAs(server, model string) string {
	s := f.byName[server] // fixed by NewFleet
	if s == nil {
		return model
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.learnLocked(model)
	return s.sendAs(model)
}

// fleetNames turns models a server reports in its own spelling into the
// fleet's names; a model no name of the fleet's maps to keeps its spelling
// (it still takes memory). nil stays nil: the server did not tell.
func (s *fleetServer) fleetNames(reported []string) []string {
	if reported == nil {
		return nil
	}
	out := make([]string, 0, len(reported))
	for _, as := range reported {
		if names := s.back[as]; len(names) > 0 {
			out = append(out, names...)
		} else {
			out = append(out, as)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
