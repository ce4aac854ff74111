package gpu

import (
	"maps"
	"slices"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/gpu/probe"
)

// resServer is a JIT server of 24 GB holding models in LRU order (first is
// least recently used), some of them streaming.
func resServer(vram float64, held []string, streaming ...string) *fleetServer {
	s := newServer(ServerConfig{Config: client.Config{Name: "gpu0", Kind: "sim"}, Slots: 4}, nil)
	s.seen.vramTotalGB = vram
	for _, m := range held {
		s.res.add(m)
	}
	for i, m := range streaming {
		s.slots[i].busy, s.slots[i].model = true, m
		s.busy++
	}
	return s
}

func heldModels(s *fleetServer) []string { return slices.Sorted(maps.Keys(s.res.lru)) }

func TestFleetResidencyFollowsTheServersEvictions(t *testing.T) {
	sizes := map[string]placement.ModelView{"a": {SizeGB: 5}, "a2": {SizeGB: 5}, "b": {SizeGB: 10}, "c": {SizeGB: 8}, "big": {SizeGB: 20}, "u": {}}
	tests := []struct {
		name      string
		vram      float64
		held      []string
		streaming []string
		load      string
		atStart   []string // held once the load starts
		atEnd     []string // held once it has loaded
	}{
		{"room to spare evicts nothing", 24, []string{"a", "c"}, nil, "b", []string{"a", "c"}, []string{"a", "b", "c"}},
		{"the least recently used idle model goes first", 24, []string{"a", "b", "c"}, nil, "big",
			[]string{}, []string{"big"}},
		{"only as many as make room, oldest first", 24, []string{"a", "c", "b"}, nil, "a2",
			[]string{"b", "c"}, []string{"a2", "b", "c"}},
		{"idle models go before streaming ones", 20, []string{"a", "b"}, []string{"a"}, "c",
			[]string{"a"}, []string{"a", "c"}},
		{"a load that needs a streaming model's room waits for it, and evicts then", 24, []string{"a", "b"}, []string{"b"}, "big",
			[]string{"a", "b"}, []string{"big"}},
		{"unknown sizes: one model at a time, streaming ones kept", 24, []string{"a", "b"}, []string{"b"}, "u",
			[]string{"b"}, []string{"b", "u"}},
		{"unknown VRAM: one model at a time", 0, []string{"a", "b"}, nil, "c", []string{}, []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := resServer(tt.vram, tt.held, tt.streaming...)
			s.beginLoad(tt.load, sizes)
			if got := heldModels(s); !slices.Equal(got, tt.atStart) {
				t.Errorf("as the load starts: held %v, want %v", got, tt.atStart)
			}
			for i := range s.slots { // the streams end before the load does
				s.slots[i].busy = false
			}
			s.loaded(tt.load, sizes)
			if got := heldModels(s); !slices.Equal(got, tt.atEnd) {
				t.Errorf("once loaded: held %v, want %v", got, tt.atEnd)
			}
		})
	}
}

func TestFleetResidencyTakesOnlyProbesThatSawTheServerAtRest(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *fleetServer) // what the fleet did while the probe ran
		force  bool
		want   []string
	}{
		{"nothing changed: the probe's word stands", func(*fleetServer) {}, false, []string{"x"}},
		{"a load began since: the probe is stale", func(s *fleetServer) { s.beginLoad("b", nil) }, false, []string{}},
		{"a load is under way", func(s *fleetServer) { s.loads["b"] = make(chan struct{}) }, false, []string{"a"}},
		{"a model loaded since", func(s *fleetServer) { s.loaded("b", nil) }, false, []string{"a", "b"}},
		{"a server that rejoins takes it whatever", func(s *fleetServer) { s.loaded("b", nil) }, true, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := resServer(24, []string{"a"})
			ver := s.res.ver
			tt.change(s)
			s.adoptResidency([]string{"x"}, ver, tt.force)
			if got := heldModels(s); !slices.Equal(got, tt.want) {
				t.Errorf("held %v, want %v", got, tt.want)
			}
		})
	}
}

// A server whose kind is left to detect is taken for static until a probe
// tells its kind; the probe that finds it JIT is the first reading of what
// it holds and must stand, or the first decisions see nothing resident and
// load over the model that is there. Every probe started before the
// detection reads the same untouched server.
func TestFleetKnowsWhatADetectedServerHoldsFromTheProbeThatDetectsIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind string
		want []string
	}{
		{"detected as ollama", "ollama", []string{"c"}},
		{"detected as the simulator", "sim", []string{"c"}},
		{"detected as vllm: holds everything it offers", "vllm", []string{"a", "b", "c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ServerConfig{Config: client.Config{Name: "gpu0"}, Slots: 2, Models: []string{"a", "b", "c"}}
			s := newServer(cfg, client.New(cfg.Config, nil)) // detecting the kind tells the client too
			for _, m := range []string{"a", "b", "c"} {
				s.learn(m)
			}
			f := &Fleet{}
			first, second := s.res.ver, s.res.ver // two probes in flight: Discover's and the monitor's
			f.adoptLocked(s, probe.Result{Kind: chat.Kind(tt.kind), Resident: []string{"c"}}, first, false)
			f.adoptLocked(s, probe.Result{Kind: chat.Kind(tt.kind), Resident: []string{"c"}}, second, false)
			if got := slices.Sorted(maps.Keys(s.resident())); !slices.Equal(got, tt.want) {
				t.Errorf("resident %v, want %v", got, tt.want)
			}
		})
	}
}
