package runner

import "pitwall/runner/state"

// Judge work waits in a queue of cells and is planned (tallies, queued
// judgments, ledger rows, fleet jobs) only as the window allows, so that
// what the engine holds for judging is bounded by the window and not by the
// number of cells: a 100,000-cell phase two is a queue of small entries, not
// 100,000 rendered judge prompts. Batch judges are planned at once, as a
// batch is better big, and so is a re-judge, whose cells keep their earlier
// verdicts until the new ones are in.

// judgeWindow bounds the judge samples in flight: written to the ledger,
// handed to the fleet or a batch, or waiting out a retry.
var judgeWindow = 512 // a variable for the tests

// queuedCell is a completed cell waiting for judges not yet planned: 16
// bytes, as a queue may hold every cell of the run.
type queuedCell struct {
	cell cellPos
	set  int32 // the judges to plan, an index in engine.jsets
}

// judgeSet returns the index in e.jsets of judges, added unless it is the
// last one added (the cells queued together share one slice).
func (j *judgingPart) judgeSet(judges []string) int32 {
	if n := len(j.jsets); n > 0 {
		last := j.jsets[n-1]
		if len(last) == len(judges) && &last[0] == &judges[0] {
			return int32(n - 1)
		}
	}
	j.jsets = append(j.jsets, judges)
	return int32(len(j.jsets) - 1)
}

// queueCell queues a completed cell for those of judges that have not
// judged it, and says how many judge samples that is.
func (j *judgingPart) queueCell(p cellPos, judges []string) int {
	c := j.e.table.at(p)
	if c.Status != state.Completed {
		return 0
	}
	var lazy []string
	for _, name := range judges {
		if c.Judgment(name) != nil {
			continue // judged or being judged
		}
		if j.e.r.judges[name].Batch {
			j.submitJudging(j.planCell(p, []string{name}, false))
			continue
		}
		lazy = append(lazy, name)
	}
	if len(lazy) == 0 {
		return 0
	}
	if len(lazy) == len(judges) {
		lazy = judges // the common case shares one slice
	}
	j.jqueue = append(j.jqueue, queuedCell{cell: p, set: j.judgeSet(lazy)})
	n := len(lazy) * j.samples()
	j.jqueued += n
	j.e.pub.dirty = true
	return n
}

// queueAll queues every completed cell for judges, and says how many judge
// samples that is.
func (j *judgingPart) queueAll(judges []string) int {
	n := 0
	j.e.table.each(func(p cellPos) { n += j.queueCell(p, judges) })
	return n
}

// feedJudging plans queued cells while the window has room. A run that is
// stopping or closing drops the queue: nothing was planned for those cells,
// so there is nothing to give back.
func (j *judgingPart) feedJudging() {
	switch j.e.life {
	case inferring, judging, ended:
	default:
		j.dropJudgeQueue()
		return
	}
	if len(j.jqueue) == 0 {
		return
	}
	// Planned a sixteenth of the window at a time at least (or all that
	// waits), and handed over in one submission: each is a commit of the
	// ledger (written before sent).
	room := judgeWindow - j.jinflight
	if room <= 0 || room < judgeWindow/16 && room < j.jqueued {
		return
	}
	var jobs []judgeJob
	for len(j.jqueue) > 0 && len(jobs) < room {
		q := j.jqueue[0]
		j.jqueue[0] = queuedCell{}
		j.jqueue = j.jqueue[1:]
		judges := j.jsets[q.set]
		j.jqueued -= len(judges) * j.samples()
		jobs = append(jobs, j.planCell(q.cell, judges, false)...)
	}
	j.submitJudging(jobs)
	if len(j.jqueue) == 0 {
		j.jqueue, j.jsets = nil, nil // let the arrays go
	}
}

// dropJudgeQueue forgets the cells waiting for judges (a stop).
func (j *judgingPart) dropJudgeQueue() {
	if len(j.jqueue) > 0 {
		j.e.pub.dirty = true
	}
	j.jqueue, j.jsets, j.jqueued = nil, nil, 0
}

// judgeWork is the judge samples not settled: in flight, and queued.
func (j *judgingPart) judgeWork() int { return j.jinflight + j.jqueued }
