package ui

import (
	"slices"

	"pitwall/runner/state"
)

// board keeps the tallies of the judge in view — counts, pass rates and the
// marks the status filter looks for — row by row. A snapshot re-tallies only
// the cells whose pointer changed (rows and cells are copied on write), so
// its cost follows what changed rather than the size of the grid.
type board struct {
	judge string
	// settled says no verdict is on its way: the run is over and no judge
	// work is in flight. Until then a rate waits for its whole line.
	settled bool
	tests   int
	models  int
	repeat  int
	rows    []*state.Row // the rows the tallies were taken from
	cells   []tally      // test*models + model
	rowSum  []passCount  // per test
	rowFlag []cellFlag   // per test: any of its cells
	modSum  []passCount  // per model
	rowCnt  []state.Tally
	counts  state.Tally // the whole run, for the judge in view
	total   passCount
}

// passCount is a pass rate's numbers: repeats that passed, repeats decided
// (passed or not), and how many of those the judge in view decided itself.
type passCount struct{ pass, decided, verdicts, awaiting int }

func (p *passCount) add(t tally, sign int) {
	p.pass += sign * int(t.pass)
	p.decided += sign * int(t.decided)
	p.verdicts += sign * int(t.verdicts)
	p.awaiting += sign * int(t.awaiting)
}

func (p *passCount) addCount(q passCount, sign int) {
	p.pass += sign * q.pass
	p.decided += sign * q.decided
	p.verdicts += sign * q.verdicts
	p.awaiting += sign * q.awaiting
}

// rate formats p for the board's judge. A rate is of a line's decided
// repeats, so while any repeat on the line awaits its decision (inference,
// or the judge in view) the rate waits too ("—"): the ❌ and errors come
// first and the judge's PASS later, and a rate of what is decided so far
// reads low (0% for a ❌ beside a ✓ being judged). Once the run is settled
// nothing more will be decided: the rate is of what was, and "—" where the
// judge in view decided nothing on the line.
func (b *board) rate(p passCount, g *glyphs) string {
	if p.awaiting > 0 && (!b.settled || b.judge != "" && p.verdicts == 0) {
		return g.dash
	}
	return rate(p.pass, p.decided, g)
}

// repeats returns the cells of test t and model m, one per repeat.
func repeats(run *state.BatteryRun, t, m int) []*state.Cell {
	if t < 0 || t >= len(run.Rows) || run.Rows[t] == nil {
		return nil
	}
	r := max(run.Repeat, 1)
	cells := run.Rows[t].Cells
	if (m+1)*r > len(cells) || m < 0 {
		return nil
	}
	return cells[m*r : (m+1)*r]
}

// rowAt is test t's row, nil when the snapshot lacks it.
func rowAt(run *state.BatteryRun, t int) *state.Row {
	if t < 0 || t >= len(run.Rows) {
		return nil
	}
	return run.Rows[t]
}

// apply brings the board up to run for judge and reports which tests
// changed; all is set when everything was re-tallied.
func (b *board) apply(run *state.BatteryRun, judge string) (changed []int, all bool) {
	if run == nil {
		return nil, false
	}
	b.settled = run.Final && run.JudgeInFlight == 0
	nt, nm, nr := len(run.Tests), len(run.Models), max(run.Repeat, 1)
	if judge != b.judge || nt != b.tests || nm != b.models || nr != b.repeat {
		b.reset(run, judge)
		return nil, true
	}
	for t := range nt {
		row, old := rowAt(run, t), b.rows[t]
		if row == old {
			continue
		}
		if row == nil || old == nil || len(row.Cells) != len(old.Cells) {
			b.retally(run, t, -1)
			b.retally(run, t, 1)
		} else {
			b.retallyCells(old, row, t)
		}
		changed = append(changed, t)
	}
	return changed, false
}

// retallyCells brings test t's tallies from row old to row, counting again
// only the models whose repeats changed: rows are copied on write, so a
// cell that did not change is the same pointer in both. Re-counting the
// whole row cost a row of cells (100 in a large run) for each cell judged.
func (b *board) retallyCells(old, row *state.Row, t int) {
	var fl cellFlag
	for m := range b.models {
		k := t*b.models + m
		was, now := old.Cells[m*b.repeat:(m+1)*b.repeat], row.Cells[m*b.repeat:(m+1)*b.repeat]
		if slices.Equal(was, now) {
			fl |= b.cells[k].flags
			continue
		}
		var before, after state.Tally
		tallyCell(was, b.judge, &before)
		tl := tallyCell(now, b.judge, &after)
		prev := b.cells[k]
		b.cells[k] = tl
		b.modSum[m].add(prev, -1)
		b.modSum[m].add(tl, 1)
		b.rowSum[t].add(prev, -1)
		b.rowSum[t].add(tl, 1)
		b.total.add(prev, -1)
		b.total.add(tl, 1)
		b.rowCnt[t].Merge(before, -1)
		b.rowCnt[t].Merge(after, 1)
		b.counts.Merge(before, -1)
		b.counts.Merge(after, 1)
		fl |= tl.flags
	}
	b.rowFlag[t] = fl
	b.rows[t] = row
}

func (b *board) reset(run *state.BatteryRun, judge string) {
	nt, nm := len(run.Tests), len(run.Models)
	*b = board{
		judge:   judge,
		settled: b.settled,
		tests:   nt,
		models:  nm,
		repeat:  max(run.Repeat, 1),
		rows:    make([]*state.Row, nt),
		cells:   make([]tally, nt*nm),
		rowSum:  make([]passCount, nt),
		rowFlag: make([]cellFlag, nt),
		modSum:  make([]passCount, nm),
		rowCnt:  make([]state.Tally, nt),
	}
	for t := range nt {
		b.retally(run, t, 1)
	}
}

// retally removes test t's old contribution (sign -1) or adds its new one
// from run (sign +1).
func (b *board) retally(run *state.BatteryRun, t, sign int) {
	if sign < 0 {
		for m := range b.models {
			b.modSum[m].add(b.cells[t*b.models+m], -1)
		}
		b.total.addCount(b.rowSum[t], -1)
		b.counts.Merge(b.rowCnt[t], -1)
		return
	}
	var cnt state.Tally
	var sum passCount
	var fl cellFlag
	for m := range b.models {
		tl := tallyCell(repeats(run, t, m), b.judge, &cnt)
		b.cells[t*b.models+m] = tl
		b.modSum[m].add(tl, 1)
		sum.add(tl, 1)
		fl |= tl.flags
	}
	b.rows[t] = rowAt(run, t)
	b.rowSum[t] = sum
	b.rowFlag[t] = fl
	b.rowCnt[t] = cnt
	b.total.addCount(sum, 1)
	b.counts.Merge(cnt, 1)
}

// cell is the tally of test t and model m.
func (b *board) cell(t, m int) tally {
	if t < 0 || t >= b.tests || m < 0 || m >= b.models {
		return tally{}
	}
	return b.cells[t*b.models+m]
}
