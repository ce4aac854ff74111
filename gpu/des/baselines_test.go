package des

import (
	"fmt"
	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
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
var plModels = map[string]placement.ModelView{
	"a":  {SizeGB: 16, LoadTime: 32 * time.Second, JobTime: 4 * time.Second},
	"b":  {SizeGB: 6, LoadTime: 12 * time.Second, JobTime: 4 * time.Second},
	"c":  {SizeGB: 16, LoadTime: 32 * time.Second, JobTime: 4 * time.Second},
	"d":  {SizeGB: 4, LoadTime: 8 * time.Second, JobTime: 4 * time.Second},
	"j1": {SizeGB: 8, LoadTime: 16 * time.Second, JobTime: time.Second},
	"j2": {SizeGB: 14, LoadTime: 28 * time.Second, JobTime: time.Second},
}

func (s plServer) view() placement.ServerView {
	v := placement.ServerView{Name: s.name, Up: !s.down, Slots: s.slots, Busy: s.busy, Loading: s.loading, JIT: !s.static,
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
func plQueue(specs ...any) []placement.JobView {
	var q []placement.JobView
	for i := 0; i < len(specs); i += 2 {
		spec, n := specs[i].(string), specs[i+1].(int)
		model, pin, _ := strings.Cut(spec, "@")
		p := chat.PurposeInference
		if model[0] == 'j' {
			p = chat.PurposeJudge
		}
		for range n {
			q = append(q, placement.JobView{ID: uint64(len(q) + 1), Model: model, Purpose: p, Pinned: pin})
		}
	}
	return q
}

func plView(servers []plServer, queue []placement.JobView) placement.FleetView {
	v := placement.FleetView{Queue: queue, Models: plModels, JudgeModels: map[string]bool{"j1": true, "j2": true}}
	for _, s := range servers {
		v.Servers = append(v.Servers, s.view())
	}
	return v
}

// placed renders assignments as "job@server" in job order, for comparison.
func placed(as []placement.Assignment) []string {
	as = slices.Clone(as)
	slices.SortFunc(as, func(a, b placement.Assignment) int { return int(a.Job) - int(b.Job) })
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = fmt.Sprintf("%d@%s", a.Job, a.Server)
	}
	return out
}

func TestBaselinePolicies(t *testing.T) {
	tests := []struct {
		name    string
		policy  placement.Policy
		servers []plServer
		queue   []placement.JobView
		want    []string
	}{
		{
			name:   "prompt-prix runs one model at a time across the fleet",
			policy: PromptPrix,
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24},
				{name: "s1", slots: 2, vram: 24, resident: []string{"b"}},
			},
			queue: plQueue("a", 3, "b", 3),
			want:  []string{"1@s0", "2@s1", "3@s0"},
		},
		{
			name:   "prompt-prix waits for the model in flight to finish",
			policy: PromptPrix,
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("b", 3),
			want:  []string{},
		},
		{
			name:   "prompt-prix judges after inference, the same way",
			policy: PromptPrix,
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24},
			},
			queue: plQueue("j1", 3, "a", 1),
			want:  []string{"4@s0"},
		},
		{
			name:   "fifo sends jobs in order to the least-loaded server, residency unseen",
			policy: FIFO,
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}},
				{name: "s1", slots: 2, vram: 24},
			},
			queue: plQueue("a", 1, "c", 1, "a", 1),
			want:  []string{"1@s1", "2@s0", "3@s1"},
		},
		{
			name:   "fifo stops at the head of the queue when it cannot place it",
			policy: FIFO,
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, offered: []string{"a"}},
			},
			queue: plQueue("c", 1, "a", 2),
			want:  []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := placed(tt.policy.Place(plView(tt.servers, tt.queue)))
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("placed %v, want %v", got, tt.want)
			}
		})
	}
}

// BenchmarkPlacerDecision measures one placement decision over a queue of
// 5,000 jobs and 8 servers: the scheduler's own cost per dispatch.
