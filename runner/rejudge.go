package runner

import (
	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// What users ask of judging once it has begun: another judge in view,
// cells judged again.

// switchJudge puts another judge (or the jury) in view and judges what it
// has not judged yet.
func (e *engine) switchJudge(name string) error {
	if err := e.judges.judgingRefused(); err != nil {
		return err
	}
	names, err := e.plan.Expand(name)
	if err != nil {
		return err
	}
	if name != "" {
		e.plan = e.plan.WithInView(name)
	}
	for _, n := range names {
		e.wanted[n] = true
	}
	e.pub.dirty = true
	// Before phase 2 begins, the new judges join it; from then on they
	// judge what is there.
	if e.life == judging || e.life == ended || e.plan.Judging == scoring.Pipelined {
		e.judges.queueAll(names)
	}
	return nil
}

// viewJudge puts name in view without asking it anything: the grid shows
// the verdicts it gave, and "—" where it gave none (`show --judge`).
func (e *engine) viewJudge(name string) error {
	if _, err := e.plan.Expand(name); err != nil {
		return err
	}
	e.plan = e.plan.WithInView(name)
	e.pub.dirty = true
	return nil
}

// rejudge judges cells again with a judge ("" = the one in view), with
// fresh samples.
func (e *engine) rejudge(cells []state.CellRef, name string) error {
	if err := e.judges.judgingRefused(); err != nil {
		return err
	}
	names, err := e.plan.Expand(name)
	if err != nil {
		return err
	}
	var jobs []judgeJob
	for _, ref := range cells {
		ti, ok1 := e.r.tindex[ref.Test]
		mi, ok2 := e.r.mindex[ref.Model]
		if !ok1 || !ok2 || ref.Repeat < 0 || ref.Repeat >= e.r.repeat {
			continue
		}
		p := posOf(ti, mi, ref.Repeat)
		if e.table.at(p).Status != state.Completed {
			continue
		}
		e.judges.round[p]++
		c := e.table.edit(p)
		jk := tallyKey{p, scoring.JuryName}
		if jj := c.Judgment(scoring.JuryName); jj != nil {
			e.judges.pendingJury[jk] = jj
		}
		state.DropJudgments(c, scoring.JuryName) // the aggregate is redone when the judges are
		jobs = append(jobs, e.judges.planCell(p, names, true)...)
		delete(e.judges.pendingJury, jk)
	}
	e.judges.submitJudging(jobs)
	return nil
}

// completedRefs names every completed cell.
func (e *engine) completedRefs() []state.CellRef {
	var refs []state.CellRef
	e.table.each(func(p cellPos) {
		if c := e.table.at(p); c.Status == state.Completed {
			refs = append(refs, state.CellRef{Test: c.Test, Model: c.Model, Repeat: int(p.rep)})
		}
	})
	return refs
}
