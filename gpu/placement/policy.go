package placement

import (
	"pitwall/gpu/chat"
	"time"
)

// ServerView is what the placement policy sees of one server.
type ServerView struct {
	Name      string
	Up        bool
	Slots     int
	Busy      int
	Offered   map[string]bool
	Resident  map[string]bool // loaded now (as far as pitwall knows)
	Streaming map[string]int  // model -> requests in flight on it
	Loading   string          // a model being loaded (a warm-up in flight), "" when none
	// Expected counts, per model, the steps of agent loops expected back on
	// the server: a loop's step ended here with more to come, and its next
	// step has not been queued yet (it follows within moments, once the
	// caller has answered the step's tool calls). The policy keeps such a
	// model as it keeps one that is streaming: no load evicts it, so that a
	// loop is not swapped out between its steps.
	Expected map[string]int
	// JIT says the server loads a model on demand when asked for it
	// (LM Studio, Ollama, llama.cpp router); false for vLLM and hosted APIs,
	// where every offered model is always resident.
	JIT         bool
	VRAMTotalGB float64 // 0 when unknown
	VRAMUsedGB  float64
}

// Free is the number of idle slots.
func (s ServerView) Free() int { return s.Slots - s.Busy }

// JobView is what the placement policy sees of one queued job.
type JobView struct {
	ID       uint64
	Model    string
	Purpose  chat.Purpose
	Pinned   string // must run on this server ("" = any that offers the model)
	Enqueued time.Time
	// Weight is how many jobs this one counts as: a step of an agent loop
	// stands for the steps the loop is still expected to take, itself
	// included, since they follow one another on the same model. 0 and 1
	// mean one job.
	Weight int
}

// weight is how many jobs j counts as (at least one).
func (j *JobView) weight() int { return max(j.Weight, 1) }

// ModelView is what the policy knows of a model (zero when unknown).
type ModelView struct {
	SizeGB   float64
	LoadTime time.Duration
	// JobTime is the typical time one job of the model holds a slot
	// (dispatch to last token, load excluded), as measured so far; zero
	// until known. Placer weighs remaining work with it.
	JobTime time.Duration
}

// FleetView is the whole state a placement decision is made from.
type FleetView struct {
	Now     time.Time
	Servers []ServerView
	Queue   []JobView // in submission order
	Models  map[string]ModelView
	// JudgeModels are models the judge phase needs; a policy keeps them
	// resident through the judge phase.
	JudgeModels map[string]bool
	// Phase1Done says no inference job is left anywhere, queued or running.
	Phase1Done bool
	// Upcoming counts, per model, jobs the run will submit that are not
	// queued yet: the judge phase's, which exist only once the cells they
	// judge have ended. A policy may load such a model ahead of its jobs
	// (an Assignment with Load set), so that the load overlaps the end of
	// inference instead of idling the GPUs after it.
	Upcoming map[string]int
	// Counts, when set, tells Queue's jobs by key: how many, what they
	// weigh (JobView.weight) and where the first one is. A policy may then
	// read each key's jobs from its first on, not the whole queue: the
	// queue of a large run holds thousands of jobs, and a fleet decides at
	// every job's end. Nil: a policy reads Queue itself. It must be
	// Queue's (CountQueue); the fleet keeps it as jobs come and go.
	Counts map[QueueKey]QueueCount
}

// QueueKey is what sets queued jobs apart for placement: a model, a
// purpose, and the server a job is pinned to ("" for none).
type QueueKey struct {
	Model   string
	Purpose chat.Purpose
	Pinned  string
}

// QueueCount is the queued jobs of one key: how many, their weight (each
// at least one), and the index in the queue of the first.
type QueueCount struct {
	Jobs, Weight, First int
}

// KeyOf is j's key in FleetView.Counts.
func KeyOf(j *JobView) QueueKey {
	return QueueKey{Model: j.Model, Purpose: j.Purpose, Pinned: j.Pinned}
}

// Weight is what j counts as in QueueCount.Weight.
func Weight(j *JobView) int { return j.weight() }

// CountQueue is FleetView.Counts for queue q.
func CountQueue(q []JobView) map[QueueKey]QueueCount {
	counts := map[QueueKey]QueueCount{}
	for i := range q {
		k := KeyOf(&q[i])
		c, ok := counts[k]
		if !ok {
			c.First = i
		}
		c.Jobs++
		c.Weight += q[i].weight()
		counts[k] = c
	}
	return counts
}

// Assignment places one queued job on one server, or, with Load set,
// starts loading a model there ahead of its jobs (a prefetch).
type Assignment struct {
	Job    uint64
	Server string
	// Load names a model to load on Server now with no job (Job is then
	// ignored): the fleet sends its warm-up request, which holds one of the
	// server's free slots until the model is loaded, as a job waiting for
	// its model's load does. Only for a JIT server with no load in flight.
	Load string
}

// Policy decides which queued jobs start now and where. It must be a pure
// function of the view, so that the same policy drives the live fleet and a
// discrete-event simulation in virtual time. It may return fewer assignments
// than free slots (to wait for a better placement), never more; a load
// (Assignment.Load) counts as one.
type Policy interface {
	Place(v FleetView) []Assignment
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(v FleetView) []Assignment

// Place calls f.
func (f PolicyFunc) Place(v FleetView) []Assignment { return f(v) }

// FirstFit is the first version of placement: each queued job, in order,
// goes to a free server that offers its model, preferring one where the model
// is resident. Inference jobs go before judge jobs.
var FirstFit Policy = PolicyFunc(firstFit)

func firstFit(v FleetView) []Assignment {
	free := make(map[string]int, len(v.Servers))
	for _, s := range v.Servers {
		if s.Up {
			free[s.Name] = s.Free()
		}
	}
	var out []Assignment
	place := func(j JobView) {
		best := ""
		for _, s := range v.Servers {
			if free[s.Name] <= 0 || !s.Offered[j.Model] || (j.Pinned != "" && j.Pinned != s.Name) {
				continue
			}
			if s.Resident[j.Model] {
				best = s.Name
				break
			}
			if best == "" {
				best = s.Name
			}
		}
		if best != "" {
			free[best]--
			out = append(out, Assignment{Job: j.ID, Server: best})
		}
	}
	for _, j := range v.Queue {
		if j.Purpose != chat.PurposeJudge {
			place(j)
		}
	}
	for _, j := range v.Queue {
		if j.Purpose == chat.PurposeJudge {
			place(j)
		}
	}
	return out
}
