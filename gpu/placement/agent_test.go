package placement

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// plWeigh gives the queued jobs with the given IDs a weight: steps of agent
// loops with that many steps left.
func plWeigh(q []JobView, w int, ids ...uint64) []JobView {
	for i := range q {
		if slices.Contains(ids, q[i].ID) {
			q[i].Weight = w
		}
	}
	return q
}

// TestPlacerSeesAgentLoopsAsTheirWork: a step of an agent loop counts as
// the steps its loop has left (JobView.Weight), and a model whose loop has
// just ended a step on a server, with its next step on the way
// (ServerView.Expected), is not swapped out meanwhile.
func TestPlacerSeesAgentLoopsAsTheirWork(t *testing.T) {
	tests := []struct {
		name     string
		servers  []plServer
		queue    []JobView
		expected map[string]map[string]int // server -> model -> steps
		want     []string
	}{
		{
			name:    "an agent step counts as the steps its loop has left",
			servers: []plServer{{name: "s0", slots: 1, vram: 24}},
			// Three jobs of b against one loop of d with 6 steps to go.
			queue: plWeigh(plQueue("b", 3, "d", 1), 6, 4),
			want:  []string{"4@s0"},
		},
		{
			name:    "a step of weight one is one job",
			servers: []plServer{{name: "s0", slots: 1, vram: 24}},
			queue:   plWeigh(plQueue("b", 3, "d", 1), 1, 4),
			want:    []string{"1@s0"},
		},
		{
			name:     "a model awaiting its loop's next step is not swapped out",
			servers:  []plServer{{name: "s0", slots: 1, vram: 24, resident: []string{"a"}}},
			queue:    plQueue("c", 3),
			expected: map[string]map[string]int{"s0": {"a": 3}},
			want:     []string{},
		},
		{
			name:     "nor with VRAM unknown (one model at a time)",
			servers:  []plServer{{name: "s0", slots: 1, resident: []string{"d"}}},
			queue:    plQueue("b", 3),
			expected: map[string]map[string]int{"s0": {"d": 1}},
			want:     []string{},
		},
		{
			name:     "nor for judge work",
			servers:  []plServer{{name: "s0", slots: 1, vram: 24, resident: []string{"a"}}},
			queue:    plQueue("j2", 3),
			expected: map[string]map[string]int{"s0": {"a": 2}},
			want:     []string{},
		},
		{
			name:     "a model that fits beside it still loads",
			servers:  []plServer{{name: "s0", slots: 1, vram: 24, resident: []string{"a"}}},
			queue:    plQueue("b", 3),
			expected: map[string]map[string]int{"s0": {"a": 3}},
			want:     []string{"1@s0"},
		},
		{
			name: "a loop held on one server leaves the others free to swap",
			servers: []plServer{
				{name: "s0", slots: 1, vram: 24, resident: []string{"a"}},
				{name: "s1", slots: 1, vram: 24, resident: []string{"a"}},
			},
			queue:    plQueue("c", 3),
			expected: map[string]map[string]int{"s0": {"a": 3}},
			want:     []string{"1@s1"},
		},
		{
			name: "the loop's next step goes back to the server that holds its model",
			servers: []plServer{
				{name: "s0", slots: 1, vram: 24, resident: []string{"a"}},
				{name: "s1", slots: 1, vram: 24},
			},
			queue: plWeigh(plQueue("c", 3, "a", 1), 5, 4),
			want:  []string{"1@s1", "4@s0"},
		},
		{
			name: "a model's loops spread like the jobs they stand for",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, vram: 24},
			},
			// 40 steps of 4 s over the 2 slots holding a outlast twice its
			// 32 s load; one job would not.
			queue: plWeigh(plQueue("a", 1), 40, 1),
			want:  []string{"1@s1"},
		},
		{
			name: "one job does not spread",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a", 1),
			want:  []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := plView(tt.servers, tt.queue)
			for i := range v.Servers {
				v.Servers[i].Expected = tt.expected[v.Servers[i].Name]
			}
			got := placed(Default.Place(v))
			if !slices.Equal(got, tt.want) {
				t.Errorf("placed %v, want %v", got, tt.want)
			}
		})
	}
}

// plAgentView is a random view with agent loops in it: weighted jobs, and
// steps expected back on servers for models they hold.
func plAgentView(rng *rand.Rand, models []string) FleetView {
	v := plRandomView(rng, models)
	for i := range v.Queue {
		if rng.IntN(3) == 0 {
			v.Queue[i].Weight = rng.IntN(10)
		}
	}
	for i := range v.Servers {
		s := &v.Servers[i]
		for _, m := range slices.Sorted(func(yield func(string) bool) {
			for m := range s.Resident {
				if !yield(m) {
					return
				}
			}
		}) {
			if rng.IntN(3) == 0 {
				if s.Expected == nil {
					s.Expected = map[string]int{}
				}
				s.Expected[m] = 1 + rng.IntN(5)
			}
		}
	}
	return v
}

func TestPlacerKeepsTheContractWithAgentLoops(t *testing.T) {
	models := []string{"a", "b", "c", "d", "j1", "j2"}
	for seed := range uint64(300) {
		plCheckContract(t, seed, plAgentView(rand.New(rand.NewPCG(seed, 13)), models))
	}
}

// TestPlacerNeverEvictsAModelAwaitingItsStep checks over random views that
// no load is decided where it could evict a model a loop's next step is
// expected on: every load on such a server fits beside what it holds.
func TestPlacerNeverEvictsAModelAwaitingItsStep(t *testing.T) {
	models := []string{"a", "b", "c", "d", "j1", "j2"}
	for seed := range uint64(300) {
		v := plAgentView(rand.New(rand.NewPCG(seed, 17)), models)
		jobs := map[uint64]JobView{}
		for _, j := range v.Queue {
			jobs[j.ID] = j
		}
		servers := map[string]ServerView{}
		for _, s := range v.Servers {
			servers[s.Name] = s
		}
		for _, a := range Default.Place(v) {
			s, m := servers[a.Server], jobs[a.Job].Model
			if !s.JIT || s.Resident[m] || s.Loading == m || len(s.Expected) == 0 {
				continue
			}
			size, total := v.Models[m].SizeGB, s.VRAMTotalGB
			fits := size > 0 && total > 0 && s.VRAMUsedGB+size <= total+1e-9
			if !fits {
				t.Fatalf("seed %d: %s loads %s (%.0f GB, %.0f of %.0f GB used) while a loop's step is expected on %v",
					seed, a.Server, m, size, s.VRAMUsedGB, total, s.Expected)
			}
		}
	}
}

func TestPlacerIsDeterministicWithAgentLoops(t *testing.T) {
	models := []string{"a", "b", "c", "d", "j1", "j2"}
	for seed := range uint64(100) {
		base := plAgentView(rand.New(rand.NewPCG(seed, 19)), models)
		want := placed(Default.Place(base))
		for shuffle := range uint64(5) {
			rng := rand.New(rand.NewPCG(seed, shuffle))
			v := base
			v.Servers = slices.Clone(base.Servers)
			for i := range v.Servers {
				v.Servers[i].Expected = plRebuild(rng, v.Servers[i].Expected)
				v.Servers[i].Resident = plRebuild(rng, v.Servers[i].Resident)
			}
			if got := placed(Default.Place(v)); !slices.Equal(got, want) {
				t.Fatalf("seed %d shuffle %d: placed %v, want %v as before", seed, shuffle, got, want)
			}
		}
	}
}
