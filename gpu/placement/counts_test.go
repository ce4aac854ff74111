package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pitwall/gpu/chat"
)

// TestPlacerDecidesAlikeWithTheQueuesCounts: a decision given the queue's
// counts (which lets it read each model's jobs from its first on) is the
// decision it makes reading the queue itself, job for job and load for
// load, on random fleets whose queues are in runs of one model or
// shuffled, with agent loops' weights, jobs of one model both pinned and
// not, pinned to servers up, down and unknown, jobs of other purposes that
// place as inference, and models whose jobs lie far apart (so that the
// lists read past the whole queue between them); and the same again when
// the decision's pooled state is reused.
func TestPlacerDecidesAlikeWithTheQueuesCounts(t *testing.T) {
	models := []string{"a", "b", "c", "d", "j1", "j2"}
	decided := 0
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 23))
		v := plAgentView(rng, models)
		id := uint64(len(v.Queue))
		job := func(m, pin string) JobView {
			id++
			p := chat.PurposeInference
			if m[0] == 'j' {
				p = chat.PurposeJudge
			}
			return JobView{ID: id, Model: m, Purpose: p, Pinned: pin, Weight: rng.IntN(3)}
		}
		if rng.IntN(3) == 0 { // one model's jobs, pinned and not
			m := models[rng.IntN(len(models))]
			pins := []string{"", "ghost"}
			for _, s := range v.Servers {
				pins = append(pins, s.Name)
			}
			for range 1 + rng.IntN(6) {
				v.Queue = slices.Insert(v.Queue, rng.IntN(len(v.Queue)+1), job(m, pins[rng.IntN(len(pins))]))
			}
		}
		if rng.IntN(2) == 0 {
			rng.Shuffle(len(v.Queue), func(i, j int) { v.Queue[i], v.Queue[j] = v.Queue[j], v.Queue[i] })
		}
		if rng.IntN(3) == 0 { // jobs far apart: a few first, a long run, the rest last
			var far []JobView
			for _, m := range models[:1+rng.IntN(4)] {
				far = append(far, job(m, ""), job(m, ""))
			}
			run := make([]JobView, 50+rng.IntN(200))
			for i := range run {
				run[i] = job("d", "")
			}
			v.Queue = slices.Concat(far[:len(far)/2], v.Queue, run, far[len(far)/2:])
			for i := range v.Servers {
				v.Servers[i].Slots += rng.IntN(6) // room for more than a job or two
			}
		}
		for i := range v.Queue {
			if v.Queue[i].Purpose == chat.PurposeInference && rng.IntN(8) == 0 {
				v.Queue[i].Purpose = chat.PurposeWarmup
			}
		}
		want := slices.Clone(Default.Place(v))
		v.Counts = CountQueue(v.Queue)
		for again := range 2 {
			if got := Default.Place(v); !slices.Equal(got, want) {
				t.Fatalf("seed %d (decision %d): with counts %v, without %v", seed, again+1, got, want)
			}
		}
		if len(want) > 0 {
			decided++
		}
	}
	if decided < 1000 {
		t.Fatalf("only %d of the views had anything to place: the test compares too little", decided)
	}
}

// BenchmarkPlacerFarApart is the decision that reads most with the queue's
// counts: sixteen models with one job at each end of the queue, 5,000 jobs
// of another between, and sixteen servers with two slots free. It reads
// at most twice the queue (more's bound), where reading from each model's
// first on alone would read it sixteen times.
func BenchmarkPlacerFarApart(b *testing.B) {
	var servers []plServer
	var ends []string
	models := map[string]ModelView{"bulk": {SizeGB: 1}}
	for i := range 16 {
		m := fmt.Sprintf("m%02d", i)
		ends = append(ends, m)
		models[m] = ModelView{SizeGB: 1}
		servers = append(servers, plServer{name: fmt.Sprintf("s%02d", i), slots: 2, vram: 24, resident: []string{m}})
	}
	var q []JobView
	for _, m := range ends {
		q = append(q, JobView{ID: uint64(len(q) + 1), Model: m, Purpose: chat.PurposeInference})
	}
	for range 5000 {
		q = append(q, JobView{ID: uint64(len(q) + 1), Model: "bulk", Purpose: chat.PurposeInference})
	}
	for _, m := range ends {
		q = append(q, JobView{ID: uint64(len(q) + 1), Model: m, Purpose: chat.PurposeInference})
	}
	for _, counted := range []bool{false, true} {
		name := "queue-read"
		v := plView(servers, q)
		v.Models = models
		if counted {
			name, v.Counts = "counts-given", CountQueue(q)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Default.Place(v)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/decision")
		})
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
