package placement

import (
	"fmt"
	"slices"
	"testing"
)

// loadsOf renders the loads with no job among as, "model@server".
func loadsOf(as []Assignment) []string {
	var out []string
	for _, a := range as {
		if a.Load != "" {
			out = append(out, fmt.Sprintf("%s@%s", a.Load, a.Server))
		}
	}
	return out
}

func TestPlacerLoadsUpcomingModelsAheadOfTheirJobs(t *testing.T) {
	tests := []struct {
		name     string
		servers  []plServer
		queue    []JobView
		upcoming map[string]int
		want     []string
	}{
		{
			name:     "a judge model loads beside the last model streaming, on the free slot",
			servers:  []plServer{{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"c"}, streaming: map[string]int{"c": 1}}},
			upcoming: map[string]int{"j1": 100},
			want:     []string{"j1@s0"},
		},
		{
			name:     "while the resident model's work outlasts the load, it takes the slots",
			servers:  []plServer{{name: "s0", slots: 2, vram: 24, resident: []string{"c"}}},
			queue:    plQueue("c", 20),
			upcoming: map[string]int{"j1": 100},
		},
		{
			name:     "as its last jobs would end within the load, one slot loads",
			servers:  []plServer{{name: "s0", slots: 2, vram: 24, resident: []string{"c"}}},
			queue:    plQueue("c", 3),
			upcoming: map[string]int{"j1": 100},
			want:     []string{"j1@s0"},
		},
		{
			name: "not while the server may still have to load a model for inference",
			servers: []plServer{
				{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"c"}, streaming: map[string]int{"c": 1}},
				{name: "s1", slots: 2, busy: 2, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 2}},
			},
			queue:    plQueue("b@s0", 1),
			upcoming: map[string]int{"j1": 100},
			want:     nil,
		},
		{
			name:     "not where it does not fit beside what streams",
			servers:  []plServer{{name: "s0", slots: 2, busy: 1, vram: 24, resident: []string{"a"}, streaming: map[string]int{"a": 1}}},
			upcoming: map[string]int{"j2": 100},
		},
		{
			name:     "not where the server might evict an idle judge model for it",
			servers:  []plServer{{name: "s0", slots: 2, vram: 24, resident: []string{"j1", "d"}}},
			upcoming: map[string]int{"j1": 50, "j2": 50},
		},
		{
			// c's last jobs start in this decision: the room they hold is
			// not free, though nothing of c is queued or streaming yet.
			name:     "not into room held by a model given its last jobs in the same decision",
			servers:  []plServer{{name: "s0", slots: 3, vram: 24, resident: []string{"c"}}},
			queue:    plQueue("c", 2),
			upcoming: map[string]int{"j2": 100},
		},
		{
			name:     "into room held by an idle model with nothing left to do",
			servers:  []plServer{{name: "s0", slots: 2, vram: 24, resident: []string{"a"}}},
			upcoming: map[string]int{"j2": 100},
			want:     []string{"j2@s0"},
		},
		{
			name: "a second copy only when the work to come is worth spreading",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"j1"}},
				{name: "s1", slots: 2, vram: 24},
			},
			upcoming: map[string]int{"j1": 4},
		},
		{
			// s0 takes j2, which no server holds, over a second j1 with
			// more work; s1 then finds j2 held, with too little work for
			// a second copy, and j1 worth one.
			name: "a model no server holds goes first, then a second copy",
			servers: []plServer{
				{name: "s0", slots: 2, vram: 24, resident: []string{"j1"}},
				{name: "s1", slots: 2, vram: 24},
			},
			upcoming: map[string]int{"j1": 500, "j2": 10},
			want:     []string{"j2@s0", "j1@s1"},
		},
		{
			name:     "never with VRAM unknown",
			servers:  []plServer{{name: "s0", slots: 2, resident: []string{"c"}}},
			upcoming: map[string]int{"j1": 100},
		},
		{
			name:     "nothing upcoming, nothing loads",
			servers:  []plServer{{name: "s0", slots: 2, vram: 24, resident: []string{"c"}}},
			upcoming: map[string]int{"j1": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := plView(tc.servers, tc.queue)
			v.Upcoming = tc.upcoming
			as := Default.Place(v)
			if got := loadsOf(as); !slices.Equal(got, tc.want) {
				t.Errorf("loads %v, want %v (all: %+v)", got, tc.want, as)
			}
			free := 0
			for _, s := range v.Servers {
				free += s.Free()
			}
			if len(as) > free {
				t.Errorf("%d assignments for %d free slots", len(as), free)
			}
		})
	}
}
