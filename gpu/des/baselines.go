package des

import (
	"cmp"
	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
)

// The baselines below are what pitwall's placement.Default is measured against in
// BenchmarkReferenceFleet; they are policies only so that the same
// discrete-event simulation can run them. Neither is meant for real runs.

// PromptPrix places work the way prompt-prix does: one model at a time
// across the fleet, each of its jobs to the least-loaded server that offers
// it (the first job on each server warms the model up), and the next model
// only once every job of the previous one has finished. Inference models go
// first in queue order, then judge models the same way.
var PromptPrix placement.Policy = placement.PolicyFunc(promptPrix)

// FIFO places work the way promptfoo does: jobs in queue order, each to the
// least-loaded server that offers its model, under one global concurrency
// limit (the fleet's total slots), with no idea of which model is resident
// where: a job loads whatever it needs.
var FIFO placement.Policy = placement.PolicyFunc(fifo)

func promptPrix(v placement.FleetView) []placement.Assignment {
	// The model in flight is the one being run; with none, the next one is
	// the first queued, inference before judging.
	current := ""
	consider := func(m string) {
		if m != "" && (current == "" || m < current) {
			current = m
		}
	}
	for _, s := range v.Servers {
		consider(s.Loading)
		for m, n := range s.Streaming {
			if n > 0 {
				consider(m)
			}
		}
	}
	if current == "" {
		for _, judging := range []bool{false, true} {
			for _, j := range v.Queue {
				if (j.Purpose == chat.PurposeJudge) == judging {
					current = j.Model
					break
				}
			}
			if current != "" {
				break
			}
		}
	}
	var out []placement.Assignment
	busy := leastLoaded(v)
	for _, j := range v.Queue {
		if j.Model != current {
			continue
		}
		s := busy.pick(v, j)
		if s < 0 {
			break
		}
		out = append(out, placement.Assignment{Job: j.ID, Server: v.Servers[s].Name})
	}
	return out
}

func fifo(v placement.FleetView) []placement.Assignment {
	limit, inflight := 0, 0
	for _, s := range v.Servers {
		if s.Up {
			limit += s.Slots
			inflight += s.Busy
		}
	}
	var out []placement.Assignment
	busy := leastLoaded(v)
	for _, j := range v.Queue {
		if inflight >= limit {
			break
		}
		s := busy.pick(v, j)
		if s < 0 {
			break // first in, first out: nothing overtakes the head of the queue
		}
		inflight++
		out = append(out, placement.Assignment{Job: j.ID, Server: v.Servers[s].Name})
	}
	return out
}

// loadCount is each server's busy slots, assignments of this decision
// included.
type loadCount []int

func leastLoaded(v placement.FleetView) loadCount {
	busy := make(loadCount, len(v.Servers))
	for i, s := range v.Servers {
		busy[i] = s.Busy
	}
	return busy
}

// pick returns the index of the least-loaded up server with a free slot that
// may run j (ties to the first by name), counting the job there; -1 when none.
func (busy loadCount) pick(v placement.FleetView, j placement.JobView) int {
	best := -1
	for i, s := range v.Servers {
		if !s.Up || busy[i] >= s.Slots || !s.Offered[j.Model] || (j.Pinned != "" && j.Pinned != s.Name) {
			continue
		}
		if best < 0 || busy[i] < busy[best] || busy[i] == busy[best] && cmp.Less(s.Name, v.Servers[best].Name) {
			best = i
		}
	}
	if best >= 0 {
		busy[best]++
	}
	return best
}
