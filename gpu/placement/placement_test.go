package placement

import (
	"fmt"
	"math/rand/v2"
	"pitwall/gpu/chat"
	"slices"
	"strings"
	"testing"
	"time"
)

// plServer describes one server of a test view.
type plServer struct {
	name      string
	slots     int
	busy      int
	resident  []string
	streaming map[string]int
	loading   string
	vram      float64 // 0: unknown
	down      bool
	static    bool
	offered   []string // nil: every model of plModels
}

// plModels are the test views' models: sizes in GB, 1 GB loads in 2 s.
var plModels = map[string]ModelView{
	"a":  {SizeGB: 16, LoadTime: 32 * time.Second, JobTime: 4 * time.Second},
	"b":  {SizeGB: 6, LoadTime: 12 * time.Second, JobTime: 4 * time.Second},
	"c":  {SizeGB: 16, LoadTime: 32 * time.Second, JobTime: 4 * time.Second},
	"d":  {SizeGB: 4, LoadTime: 8 * time.Second, JobTime: 4 * time.Second},
	"j1": {SizeGB: 8, LoadTime: 16 * time.Second, JobTime: time.Second},
	"j2": {SizeGB: 14, LoadTime: 28 * time.Second, JobTime: time.Second},
}

func (s plServer) view() ServerView {
	v := ServerView{Name: s.name, Up: !s.down, Slots: s.slots, Busy: s.busy, Loading: s.loading, JIT: !s.static,
		Offered: map[string]bool{}, Resident: map[string]bool{}, Streaming: map[string]int{}, VRAMTotalGB: s.vram}
	offered := s.offered
	if offered == nil {
		offered = slices.Sorted(func(yield func(string) bool) {
			for m := range plModels {
				if !yield(m) {
					return
				}
			}
		})
	}
	for _, m := range offered {
		v.Offered[m] = true
	}
	for _, m := range s.resident {
		v.Resident[m] = true
		v.VRAMUsedGB += plModels[m].SizeGB
	}
	if s.loading != "" {
		v.VRAMUsedGB += plModels[s.loading].SizeGB
	}
	for m, n := range s.streaming {
		v.Streaming[m] = n
	}
	if s.vram == 0 {
		v.VRAMUsedGB = 0
	}
	return v
}

// plQueue makes queued jobs from "model" or "model@pin" specs, n of each,
// numbered from 1 in order; judge models (j1, j2) make judge jobs.
func plQueue(specs ...any) []JobView {
	var q []JobView
	for i := 0; i < len(specs); i += 2 {
		spec, n := specs[i].(string), specs[i+1].(int)
		model, pin, _ := strings.Cut(spec, "@")
		p := chat.PurposeInference
		if model[0] == 'j' {
			p = chat.PurposeJudge
		}
		for range n {
			q = append(q, JobView{ID: uint64(len(q) + 1), Model: model, Purpose: p, Pinned: pin})
		}
	}
	return q
}

// inferenceOf makes every job of q an inference job: a judge model's own
// tests.
func inferenceOf(q []JobView) []JobView {
	for i := range q {
		q[i].Purpose = chat.PurposeInference
	}
	return q
}

func plView(servers []plServer, queue []JobView) FleetView {
	v := FleetView{Queue: queue, Models: plModels, JudgeModels: map[string]bool{"j1": true, "j2": true}}
	for _, s := range servers {
		v.Servers = append(v.Servers, s.view())
	}
	return v
}

// placed renders assignments as "job@server" in job order, for comparison.
func placed(as []Assignment) []string {
	as = slices.Clone(as)
	slices.SortFunc(as, func(a, b Assignment) int { return int(a.Job) - int(b.Job) })
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = fmt.Sprintf("%d@%s", a.Job, a.Server)
	}
	return out
}

func TestPlacerRules(t *testing.T) {
	tests := []struct {
		name    string
		servers []plServer
		queue   []JobView
		want    []string
	}{
		{
			name: "a job goes where its model is resident",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"b"}},
				{name: "s1", slots: 2, vram: 24, resident: []string{"a"}},
			},
			queue: plQueue("a", 2),
			want:  []string{"1@s1", "2@s1"},
		},
		{
			name: "a resident model's work goes first, with no load",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"a"}},
			},
			queue: plQueue("c", 3, "a", 2),
			want:  []string{"4@s0", "5@s0"},
		},
		{
			name: "no swap while anything resident has work left",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}},
			},
			queue: plQueue("c", 3, "a", 1),
			want:  []string{"4@s0"},
		},
		{
			name: "drain guard: a job placed in this decision counts as streaming (one model at a time)",
			servers: []plServer{
				{name: "s0", slots: 2, resident: []string{"a"}},
			},
			queue: plQueue("a", 1, "b", 3),
			want:  []string{"1@s0"},
		},
		{
			name: "drain guard: a job placed in this decision counts as streaming (VRAM known)",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"a"}},
			},
			queue: plQueue("a", 1, "c", 3),
			want:  []string{"1@s0"},
		},
		{
			name: "drain guard: a model that would evict a streaming one waits",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}},
			},
			queue: plQueue("c", 3),
			want:  []string{},
		},
		{
			name: "drain guard with VRAM unknown: one model at a time",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, resident: []string{"d"}, streaming: map[string]int{"d": 1}},
			},
			queue: plQueue("b", 3),
			want:  []string{},
		},
		{
			name: "once the streams drained, the swap happens",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"a"}},
			},
			queue: plQueue("c", 3),
			want:  []string{"1@s0", "2@s0"},
		},
		{
			name: "swap choice: a model that fits beside the streams goes before one that must wait",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}},
			},
			queue: plQueue("c", 50, "b", 3),
			want:  []string{"51@s0"},
		},
		{
			name: "swap choice: the model with the most work left loads first",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24},
			},
			queue: plQueue("b", 3, "d", 9),
			want:  []string{"4@s0", "5@s0"},
		},
		{
			name: "first load on two slots: the quickest, so the next one loads beside its streams",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24},
			},
			// a has more work, but nothing runs beside either load: b's
			// costs 12 s of dead time, a's 32 s, and a can then load
			// beside b's last jobs.
			queue: plQueue("a", 20, "b", 3),
			want:  []string{"21@s0", "22@s0"},
		},
		{
			name: "first load: a model that fits beside nothing goes first, its load is dead time wherever it happens",
			servers: []plServer{
				// a (16 GB) fits beside neither b nor d in 18 GB.
				{name: "s0", slots: 2, vram: 18, offered: []string{"a", "b", "d"}},
			},
			queue: plQueue("d", 20, "a", 3),
			want:  []string{"21@s0", "22@s0"},
		},
		{
			name: "first load on one slot: every load is dead time, the most work goes first",
			servers: []plServer{
				{name: "s0", slots: 1, vram: 24},
			},
			queue: plQueue("b", 3, "a", 20),
			want:  []string{"4@s0"},
		},
		{
			name: "first load with the VRAM unknown: one model at a time, the most work first",
			servers: []plServer{
				{name: "s0", slots: 2},
			},
			queue: plQueue("b", 3, "a", 20),
			want:  []string{"4@s0", "5@s0"},
		},
		{
			name: "a resident model with less work left here goes first, freeing its room sooner",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"b", "d"}},
			},
			queue: plQueue("b", 10, "d", 2),
			want:  []string{"11@s0", "12@s0"},
		},
		{
			// s0 can run nothing but a, s2 nothing but b: s1 helps with b,
			// which s2 alone would take 20 s over, and leaves a, which s0
			// gets through in 4 s, instead of draining a and leaving s0 idle.
			name: "a model that is another server's only work: help where the others would take longest",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, busy: 1, vram: 24, resident: []string{"a", "b"}, streaming: map[string]int{"a": 1}},
				{name: "s2", slots: 2, busy: 2, vram: 24, resident: []string{"b"}, streaming: map[string]int{"b": 2}},
			},
			queue: plQueue("a", 2, "b", 10),
			want:  []string{"3@s1"},
		},
		{
			name: "a model no other server runs out of keeps the least-work-first order",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a", "d"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, busy: 1, vram: 24, resident: []string{"a", "b"}, streaming: map[string]int{"a": 1}},
				{name: "s2", slots: 2, busy: 2, vram: 24, resident: []string{"b", "d"}, streaming: map[string]int{"b": 2}},
			},
			queue: plQueue("a", 2, "b", 10, "d", 4),
			want:  []string{"1@s1"},
		},
		{
			name: "prefetch: a second copy loads beside the last jobs once no model is unserved",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"d"}, streaming: map[string]int{"d": 1}},
				{name: "s1", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
			},
			// d has 2 s left per slot on s0; a's 100 jobs × 4 s would keep
			// s1 busy 200 s, far longer than twice a's 32 s load.
			queue: plQueue("d", 1, "a", 100),
			want:  []string{"2@s0"},
		},
		{
			name: "prefetch: a model nobody holds goes before a second copy",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"d"}, streaming: map[string]int{"d": 1}},
				{name: "s1", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
			},
			queue: plQueue("d", 1, "a", 100, "b", 5),
			want:  []string{"102@s0"},
		},
		{
			name: "swap choice: a judge model's own tests load after the others', so the judging finds it",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24},
			},
			queue: inferenceOf(plQueue("j2", 20, "b", 3)),
			want:  []string{"21@s0", "22@s0"},
		},
		{
			name: "swap choice: a judge model's own tests load when nothing else is left",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24},
			},
			queue: inferenceOf(plQueue("j2", 3)),
			want:  []string{"1@s0", "2@s0"},
		},
		{
			name: "a judge model resident at the start runs its own tests first",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"j2"}},
			},
			queue: inferenceOf(plQueue("a", 3, "j2", 3)),
			want:  []string{"4@s0", "5@s0"},
		},
		{
			name: "prefetch: the next model beside the last jobs is not a judge model's tests",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"d"}, streaming: map[string]int{"d": 1}},
			},
			queue: inferenceOf(plQueue("j1", 9, "b", 2)),
			want:  []string{"10@s0"},
		},
		{
			name: "swap choice: a model nobody holds goes before a second copy",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a", 100, "d", 2),
			want:  []string{"101@s1", "102@s1"},
		},
		{
			name: "spread: a model with much work left loads on an idle server too",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a", 100),
			want:  []string{"1@s1", "2@s1"},
		},
		{
			name: "no spread when the work left is shorter than the load",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a", 10), // 10 jobs × 4 s on 2 slots = 20 s < 2 × 32 s
			want:  []string{},
		},
		{
			name: "prefetch: the next model loads beside the last jobs of the current one",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}},
			},
			// 2 jobs of a × 4 s on 2 slots = 4 s left, less than b's 12 s load.
			queue: plQueue("a", 2, "b", 20),
			want:  []string{"3@s0"},
		},
		{
			name: "no prefetch while the current model has long to go",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}},
			},
			queue: plQueue("a", 20, "b", 20),
			want:  []string{"1@s0"},
		},
		{
			name: "a job of a model still loading waits behind resident work",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, loading: "b", streaming: map[string]int{"b": 1}},
			},
			queue: plQueue("b", 20, "a", 2),
			want:  []string{"21@s0"},
		},
		{
			name: "judge phase: a resident judge model keeps its work",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 20, resident: []string{"j1"}},
			},
			queue: plQueue("j2", 5, "j1", 5),
			want:  []string{"6@s0", "7@s0"},
		},
		{
			name: "judge phase: a second copy of a judge model never evicts another judge model",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 20, resident: []string{"j1"}},
				{name: "s1", slots: 2, busy: 2, vram: 24, resident: []string{"j2"}, streaming: map[string]int{"j2": 2}},
			},
			queue: plQueue("j2", 200),
			want:  []string{},
		},
		{
			name: "judge phase: an unserved judge model loads beside a resident one",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"j1"}, streaming: map[string]int{"j1": 1}},
			},
			queue: plQueue("j2", 50),
			want:  []string{"1@s0"},
		},
		{
			name: "pipelined: a judge job never takes a slot an unserved inference model can use",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"j1"}},
			},
			queue: plQueue("j1", 5, "b", 3),
			want:  []string{"6@s0", "7@s0"},
		},
		{
			name: "pipelined: judge work keeps off a slot that inference waits to drain",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"j1", "a"}, streaming: map[string]int{"a": 1}},
			},
			// c (16 GB) must wait for a to drain; the free slot stays free
			// although j1 is resident and has work.
			queue: plQueue("c", 5, "j1", 5),
			want:  []string{},
		},
		{
			name: "pipelined: judge jobs take slots inference has no use for",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
				{name: "s1", slots: 2, vram: 24, resident: []string{"j1"}},
			},
			queue: plQueue("a", 3, "j1", 5),
			want:  []string{"4@s1", "5@s1"},
		},
		{
			name: "pinned jobs run only on their server",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"a"}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a@s1", 2),
			want:  []string{"1@s1", "2@s1"},
		},
		{
			name: "a job pinned to a down server waits",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"a"}},
				{name: "s1", slots: 2, vram: 24, down: true},
			},
			queue: plQueue("a@s1", 2),
			want:  []string{},
		},
		{
			name: "down servers are skipped",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"a"}, down: true},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a", 3),
			want:  []string{"1@s1", "2@s1"},
		},
		{
			name: "a server that does not offer the model is skipped",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, offered: []string{"b"}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a", 3),
			want:  []string{"1@s1", "2@s1"},
		},
		{
			name: "a static server serves every offered model at once",
			servers: []plServer{
				{name: "s0", slots: 4, static: true, offered: []string{"a", "c"}},
			},
			queue: plQueue("a", 2, "c", 2),
			want:  []string{"1@s0", "2@s0", "3@s0", "4@s0"},
		},
		{
			name: "never more assignments than free slots",
			servers: []plServer{
				{name: "s0", slots: 3, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
			},
			queue: plQueue("a", 10),
			want:  []string{"1@s0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := placed(Default.Place(plView(tt.servers, tt.queue)))
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("placed %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPlacerKeepsTheContract checks, over many random views, what every
// decision must respect: only free slots of up servers, each job once, only
// servers that offer the job's model, pins honoured.
func TestPlacerKeepsTheContract(t *testing.T) {
	models := []string{"a", "b", "c", "d", "j1", "j2"}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		plCheckContract(t, seed, plRandomView(rng, models))
	}
}

// plCheckContract fails t when Default's decision on v breaks the contract.
func plCheckContract(t *testing.T, seed uint64, v FleetView) {
	t.Helper()
	free := map[string]int{}
	servers := map[string]ServerView{}
	for _, s := range v.Servers {
		servers[s.Name] = s
		if s.Up {
			free[s.Name] = s.Free()
		}
	}
	jobs := map[uint64]JobView{}
	for _, j := range v.Queue {
		jobs[j.ID] = j
	}
	seen := map[uint64]bool{}
	for _, a := range Default.Place(v) {
		j, ok := jobs[a.Job]
		s := servers[a.Server]
		switch {
		case !ok:
			t.Fatalf("seed %d: assigned job %d, which is not queued", seed, a.Job)
		case seen[a.Job]:
			t.Fatalf("seed %d: assigned job %d twice", seed, a.Job)
		case free[a.Server] <= 0:
			t.Fatalf("seed %d: assigned job %d to %s, which has no free slot or is down", seed, a.Job, a.Server)
		case !s.Offered[j.Model]:
			t.Fatalf("seed %d: assigned %s to %s, which does not offer it", seed, j.Model, a.Server)
		case j.Pinned != "" && j.Pinned != a.Server:
			t.Fatalf("seed %d: job pinned to %s placed on %s", seed, j.Pinned, a.Server)
		}
		seen[a.Job] = true
		free[a.Server]--
	}
}

func plRandomView(rng *rand.Rand, models []string) FleetView {
	var servers []plServer
	for i := range 1 + rng.IntN(4) {
		s := plServer{name: fmt.Sprintf("s%d", i), slots: 1 + rng.IntN(3), down: rng.IntN(6) == 0}
		if rng.IntN(3) > 0 {
			s.vram = 24
		}
		s.static = rng.IntN(8) == 0
		if rng.IntN(3) == 0 {
			s.offered = []string{models[rng.IntN(len(models))], models[rng.IntN(len(models))]}
		}
		used := 0.0
		for _, m := range models {
			if rng.IntN(4) == 0 && used+plModels[m].SizeGB <= 24 {
				s.resident = append(s.resident, m)
				used += plModels[m].SizeGB
			}
		}
		s.streaming = map[string]int{}
		for _, m := range s.resident {
			if s.busy < s.slots && rng.IntN(2) == 0 {
				s.streaming[m]++
				s.busy++
			}
		}
		servers = append(servers, s)
	}
	var specs []any
	for _, m := range models {
		spec := m
		if rng.IntN(5) == 0 {
			spec += "@" + servers[rng.IntN(len(servers))].name
		}
		specs = append(specs, spec, rng.IntN(12))
	}
	v := plView(servers, plQueue(specs...))
	if rng.IntN(2) == 0 {
		v.Models = map[string]ModelView{"a": {}, "b": {SizeGB: 6}} // mostly unknown
	}
	return v
}

// TestPlacerIsDeterministic builds the same fleet with its servers and
// every map in a different order and expects the same decision.
func TestPlacerIsDeterministic(t *testing.T) {
	models := []string{"a", "b", "c", "d", "j1", "j2"}
	for seed := range uint64(100) {
		base := plRandomView(rand.New(rand.NewPCG(seed, 11)), models)
		want := placed(Default.Place(base))
		for shuffle := range uint64(5) {
			rng := rand.New(rand.NewPCG(seed, shuffle))
			v := base
			v.Servers = slices.Clone(base.Servers)
			rng.Shuffle(len(v.Servers), func(i, j int) { v.Servers[i], v.Servers[j] = v.Servers[j], v.Servers[i] })
			for i := range v.Servers {
				s := &v.Servers[i]
				s.Offered, s.Resident = plRebuild(rng, s.Offered), plRebuild(rng, s.Resident)
				s.Streaming = plRebuild(rng, s.Streaming)
			}
			v.Models = plRebuild(rng, base.Models)
			v.JudgeModels = plRebuild(rng, base.JudgeModels)
			if got := placed(Default.Place(v)); !slices.Equal(got, want) {
				t.Fatalf("seed %d shuffle %d: placed %v, want %v as before", seed, shuffle, got, want)
			}
		}
	}
}

// plRebuild copies m, inserting its keys in a random order.
func plRebuild[V any](rng *rand.Rand, m map[string]V) map[string]V {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	out := make(map[string]V, len(m))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func BenchmarkPlacerDecision(b *testing.B) {
	b.ReportAllocs()
	var servers []plServer
	for i := range 8 {
		servers = append(servers, plServer{name: fmt.Sprintf("s%d", i), slots: 2, busy: 1, vram: 24,
			resident: []string{"a"}, streaming: map[string]int{"a": 1}})
	}
	q := plQueue("a", 2000, "b", 1000, "c", 1000, "j1", 1000)
	// The queue a run submits: each test's jobs for every model in turn.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] })
	for _, counted := range []bool{false, true} {
		name := "queue-read"
		v := plView(servers, q)
		if counted {
			name, v.Counts = "counts-given", CountQueue(q)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Default.Place(v)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/decision")
		})
	}
}
