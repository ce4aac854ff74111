package runner

import (
	"slices"

	"pitwall/gpu/chat"
)

// Phase one hands the fleet every cell at once when the run has up to
// inferenceWindow cells: placement sees the whole phase and loads each
// model once. A larger run is handed over in windows of that many cells,
// model by model (every test of one model, then the next), so that what
// the engine and the fleet hold stays bounded while placement still sees
// whole models at a time and loads each about once.

// inferenceWindow is how many first attempts the fleet holds at once in a
// run too large to hand over whole; it is refilled once a sixteenth of it
// has room.
var inferenceWindow = 4096 // a variable for the tests

// queueInference queues every cell's first attempt and hands over what the
// window allows.
func (in *inferencePart) queueInference() {
	n := len(in.e.r.tests) * len(in.e.r.models) * in.e.r.repeat
	in.inflight += n
	if n <= inferenceWindow {
		// Battery order, model-major within a test, so the first rows
		// fill first; placement decides what actually runs first.
		batch := make([]*inferAttempt, 0, n)
		in.e.table.each(func(p cellPos) {
			batch = append(batch, newInferAttempt(in, p, 1, nil))
		})
		in.submitInference(batch)
		return
	}
	in.iqueue = make([]cellPos, 0, n)
	for _, mi := range in.e.r.inferenceOrder() {
		for ti := range in.e.r.tests {
			for rep := range in.e.r.repeat {
				in.iqueue = append(in.iqueue, posOf(ti, mi, rep))
			}
		}
	}
	in.feedInference()
}

// feedInference hands queued cells to the fleet while the window has room;
// a run that is stopping cancels them, as the fleet cancels what it holds.
func (in *inferencePart) feedInference() {
	if len(in.iqueue) == 0 {
		return
	}
	if in.e.life != inferring {
		rest := in.iqueue
		in.iqueue = nil
		for _, q := range rest {
			a := newInferAttempt(in, q, 1, nil)
			in.settled(a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "stopped before it was sent"})
		}
		return
	}
	room := inferenceWindow - (in.inflight - len(in.iqueue))
	if room <= 0 || room < inferenceWindow/16 && room < len(in.iqueue) {
		// Refilled a sixteenth of the window at a time, not cell by cell:
		// each hand-over is a commit of the ledger (written before sent).
		return
	}
	take := min(room, len(in.iqueue))
	batch := make([]*inferAttempt, take)
	for i, q := range in.iqueue[:take] {
		batch[i] = newInferAttempt(in, q, 1, nil)
	}
	in.iqueue = in.iqueue[take:]
	if len(in.iqueue) == 0 {
		in.iqueue = nil
	}
	in.submitInference(batch)
}

// inferenceOrder is the models' indices in the order a windowed run hands
// them over: the config's, with the models that also judge last, so that
// the judging that follows finds them loaded (placement orders a run
// handed over whole the same way).
func (r *Run) inferenceOrder() []int {
	judging := map[string]bool{}
	for _, j := range r.judges {
		judging[j.Model] = true
	}
	order := make([]int, len(r.models))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ja, jb := judging[r.models[a]], judging[r.models[b]]
		switch {
		case ja == jb:
			return 0
		case jb:
			return -1
		}
		return 1
	})
	return order
}
