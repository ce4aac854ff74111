package state

import "pitwall/judge/scoring"

// Tally counts cells by status and, for one judge, by verdict. It is the
// only count of a run: the runner publishes it, the UI shows it, export and
// the exit code read it, so they cannot disagree.
type Tally struct {
	Pending, Queued, Loading, Running, Completed, Failed, Errored, Cancelled int

	// Verdicts of the judge the tally was made for, on completed cells.
	Pass, Fail, Warn, JudgeError int
	Judged                       int // completed cells with a verdict (judge errors included)
	ToJudge                      int // completed cells, when there is a judge
}

// Add counts one cell (sign +1) or takes it back (sign -1), with the
// verdict of judge ("" counts no verdicts).
func (t *Tally) Add(c *Cell, judge string, sign int) {
	switch c.Status {
	case Queued:
		t.Queued += sign
	case Loading:
		t.Loading += sign
	case Running:
		t.Running += sign
	case Completed:
		t.Completed += sign
	case Failed:
		t.Failed += sign
	case Errored:
		t.Errored += sign
	case Cancelled:
		t.Cancelled += sign
	default:
		t.Pending += sign
	}
	if judge == "" || c.Status != Completed {
		return
	}
	t.ToJudge += sign
	j := c.Judgment(judge)
	if j == nil || j.Status != JudgmentDone {
		return
	}
	t.Judged += sign
	switch j.Verdict {
	case scoring.Pass:
		t.Pass += sign
	case scoring.Fail:
		t.Fail += sign
	case scoring.Warn:
		t.Warn += sign
	default:
		t.JudgeError += sign
	}
}

// AddRow counts every cell of a row.
func (t *Tally) AddRow(r *Row, judge string, sign int) {
	for i := range r.Cells {
		t.Add(r.Cells[i], judge, sign)
	}
}

// Merge adds o to t (sign +1) or takes it away (sign -1).
func (t *Tally) Merge(o Tally, sign int) {
	t.Pending += sign * o.Pending
	t.Queued += sign * o.Queued
	t.Loading += sign * o.Loading
	t.Running += sign * o.Running
	t.Completed += sign * o.Completed
	t.Failed += sign * o.Failed
	t.Errored += sign * o.Errored
	t.Cancelled += sign * o.Cancelled
	t.Pass += sign * o.Pass
	t.Fail += sign * o.Fail
	t.Warn += sign * o.Warn
	t.JudgeError += sign * o.JudgeError
	t.Judged += sign * o.Judged
	t.ToJudge += sign * o.ToJudge
}

// TallyRows counts every cell of rows for judge.
func TallyRows(rows []*Row, judge string) Tally {
	var t Tally
	for _, r := range rows {
		t.AddRow(r, judge, 1)
	}
	return t
}

// Done is the number of cells whose inference is over.
func (t Tally) Done() int { return t.Completed + t.Failed + t.Errored + t.Cancelled }

// Cells is the number of cells counted.
func (t Tally) Cells() int {
	return t.Pending + t.Queued + t.Loading + t.Running + t.Done()
}

// Waiting is the number of cells whose inference has not started: pending,
// queued, or waiting on a model load.
func (t Tally) Waiting() int { return t.Pending + t.Queued + t.Loading }
