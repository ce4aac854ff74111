package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pitwall/gpu/chat"
)

// TestPlacerDecidesAlikeWithTheQueuesCounts: a decision given the queue's
// counts (which lets it stop reading the queue early) is the decision it
// makes counting the queue itself, job for job and load for load, on
// random fleets whose queues are in runs of one model or shuffled, with
// agent loops' weights, pinned jobs (to servers up and down) and jobs of
// other purposes that place as inference.
func TestPlacerDecidesAlikeWithTheQueuesCounts(t *testing.T) {
	models := []string{"a", "b", "c", "d", "j1", "j2"}
	decided := 0
	for seed := range uint64(2000) {
		rng := rand.New(rand.NewPCG(seed, 23))
		v := plAgentView(rng, models)
		if rng.IntN(2) == 0 {
			rng.Shuffle(len(v.Queue), func(i, j int) { v.Queue[i], v.Queue[j] = v.Queue[j], v.Queue[i] })
		}
		for i := range v.Queue {
			if v.Queue[i].Purpose == chat.PurposeInference && rng.IntN(8) == 0 {
				v.Queue[i].Purpose = chat.PurposeWarmup
			}
		}
		want := slices.Clone(Default.Place(v))
		v.Counts = CountQueue(v.Queue)
		got := Default.Place(v)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: with counts %v, without %v", seed, got, want)
		}
		if len(want) > 0 {
			decided++
		}
	}
	if decided < 500 {
		t.Fatalf("only %d of the views had anything to place: the test compares too little", decided)
	}
}

// TestCountQueueCountsEachKey: CountQueue keeps jobs, weights and the
// first job's index by key.
func TestCountQueueCountsEachKey(t *testing.T) {
	q := plQueue("j1", 1, "a", 2, "a@s1", 1)
	q[1].Weight = 3
	want := map[QueueKey]QueueCount{
		{Model: "a", Purpose: chat.PurposeInference}:               {Jobs: 2, Weight: 4, First: 1},
		{Model: "a", Purpose: chat.PurposeInference, Pinned: "s1"}: {Jobs: 1, Weight: 1, First: 3},
		{Model: "j1", Purpose: chat.PurposeJudge}:                  {Jobs: 1, Weight: 1, First: 0},
	}
	if c := CountQueue(q); fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", c, want)
	}
}
