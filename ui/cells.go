package ui

import (
	"strconv"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// kind is what a cell shows; it picks the glyph and the colour.
type kind uint8

const (
	kindPending kind = iota
	kindQueued
	kindLoading
	kindRunning
	kindJudging // inference done, the judge in view is at work on it
	kindOK      // inference done, not judged (yet, or ever)
	kindCancelled
	kindPass
	kindWarn
	kindJudgeError
	kindErrored
	kindFail
	kindFailed
	numKinds
)

// active reports whether the cell's inference is still under way.
func (k kind) active() bool { return k <= kindRunning }

// severity orders the outcomes of a cell's repeats; the grid shows the worst.
// Failures come first because they are what a person scans the grid for.
func (k kind) severity() int {
	switch k {
	case kindFailed, kindFail:
		return 5
	case kindErrored, kindJudgeError:
		return 4
	case kindWarn:
		return 3
	case kindCancelled:
		return 2
	}
	return 1
}

// success reports whether the repeat counts as passed when nothing better is known.
func (k kind) success() bool { return k == kindOK || k == kindPass }

// figure is what `t` puts in the cells instead of verdicts.
type figure uint8

const (
	figNone figure = iota
	figLatency
	figTTFT
	figTPS
	numFigures
)

func (f figure) String() string {
	switch f {
	case figLatency:
		return "latency"
	case figTTFT:
		return "time to first token"
	case figTPS:
		return "tokens/s"
	}
	return "verdicts"
}

// repeatKind is what one repeat shows with judge in view ("" = no judge).
func repeatKind(c *state.Cell, judge string) kind {
	switch c.Status {
	case state.Queued:
		return kindQueued
	case state.Loading:
		return kindLoading
	case state.Running:
		return kindRunning
	case state.Failed:
		return kindFailed
	case state.Errored:
		return kindErrored
	case state.Cancelled:
		return kindCancelled
	case state.Completed:
		if judge == "" {
			return kindOK
		}
		j := c.Judgment(judge)
		if j == nil {
			return kindOK
		}
		if j.Status != state.JudgmentDone {
			return kindJudging
		}
		return verdictKind(j.Verdict)
	}
	return kindPending
}

func verdictKind(v scoring.Verdict) kind {
	switch v {
	case scoring.Pass:
		return kindPass
	case scoring.Fail:
		return kindFail
	case scoring.Warn:
		return kindWarn
	}
	return kindJudgeError
}

// judgeRunning reports whether the judge in view is running on c right now
// (rather than waiting in its queue).
func judgeRunning(c *state.Cell, judge string) bool {
	j := c.Judgment(judge)
	return j != nil && j.Status == state.JudgmentRunning
}

// glyph is the mark of a kind; frame animates the spinner.
func (g *glyphs) glyph(k kind, frame int) string {
	switch k {
	case kindQueued:
		return g.queued
	case kindLoading:
		return g.loading
	case kindRunning:
		return g.spinner[frame%len(g.spinner)]
	case kindOK:
		return g.ok
	case kindFailed:
		return g.failed
	case kindErrored:
		return g.errored
	case kindCancelled:
		return g.cancel
	case kindPass:
		return g.pass
	case kindFail:
		return g.fail
	case kindWarn:
		return g.warn
	case kindJudgeError:
		return g.judgeError
	case kindJudging:
		return g.ok
	}
	return g.pending
}

// shown is one grid cell, before padding and colour.
type shown struct {
	text     string
	kind     kind
	animated bool // the text changes with the spinner frame
}

// showCell summarises the repeats of one (test, model) cell.
//
// With one repeat it shows the repeat: its glyph during inference, then the
// verdict and score of the judge in view. With several it shows, while any
// repeat is under way, the busiest activity and how many repeats are over
// (⠋ 1/3); once all are over, the worst outcome among them (failure before
// error before WARN before cancelled before success) and how many succeeded
// (FAIL 2/3). A lone agent repeat at work shows its step under way (⠋ s3).
// In figure mode it shows the inference glyph and the mean figure
// of the repeats that ran.
func showCell(cells []*state.Cell, judge string, fig figure, g *glyphs, frame int) shown {
	if fig != figNone {
		judge = ""
	}
	var (
		best    = kindPending // the busiest activity seen
		worst   = kindOK
		busy    bool
		judging bool
		jRun    bool
		over    int
		success int
		decided int
	)
	first := true
	for i := range cells {
		c := cells[i]
		k := repeatKind(c, judge)
		switch {
		case k.active():
			if !busy || k > best {
				best = k
			}
			busy = true
			continue
		case k == kindJudging:
			judging = true
			jRun = jRun || judgeRunning(c, judge)
		default:
			decided++
		}
		over++
		if k.success() {
			success++
		}
		if first || k.severity() > worst.severity() {
			worst = k
		}
		first = false
	}
	var s shown
	switch {
	case busy:
		s.kind = best
		s.text = g.glyph(best, frame)
		s.animated = best == kindRunning
		if len(cells) > 1 {
			s.text += " " + strconv.Itoa(over) + "/" + strconv.Itoa(len(cells))
		} else if n := len(cells[0].Said().Steps); n > 0 && best == kindRunning {
			// An agent cell at work: the model turn under way.
			s.text += " s" + strconv.Itoa(n+1)
		}
	case judging:
		s.kind = kindJudging
		mark := g.queued
		if jRun {
			mark = g.spinner[frame%len(g.spinner)]
			s.animated = true
		}
		s.text = g.ok + " " + mark
		if len(cells) > 1 {
			s.text += " " + strconv.Itoa(decided) + "/" + strconv.Itoa(len(cells))
		}
	default:
		s.kind = worst
		s.text = g.glyph(worst, frame)
		if len(cells) > 1 {
			s.text += " " + strconv.Itoa(success) + "/" + strconv.Itoa(len(cells))
		} else if worst == kindPass || worst == kindFail || worst == kindWarn {
			if j := cells[0].Judgment(judge); j != nil {
				s.text += " " + strconv.FormatFloat(j.Score, 'f', 2, 64)
			}
		}
	}
	if fig != figNone && !busy {
		if v, ok := meanFigure(cells, fig); ok {
			s.text = g.glyph(s.kind, frame) + " " + v
		} else if allCached(cells) {
			s.text = g.glyph(s.kind, frame) + " cache"
		}
	}
	return s
}

// allCached says every repeat's answer came from the ledger (--reuse).
func allCached(cells []*state.Cell) bool {
	for _, c := range cells {
		if !c.Cached() {
			return false
		}
	}
	return len(cells) > 0
}

// meanFigure is the mean of fig over the repeats that ran, formatted to at
// most five columns.
func meanFigure(cells []*state.Cell, fig figure) (string, bool) {
	var sum float64
	n := 0
	for i := range cells {
		c := cells[i]
		if c.Status != state.Completed && c.Status != state.Failed || c.Cached() {
			continue // a reused answer's figures are not this run's
		}
		var v float64
		switch fig {
		case figLatency:
			v = float64(c.Latency)
		case figTTFT:
			v = float64(c.TTFT)
		case figTPS:
			v = c.TokensPerSec
		}
		if v <= 0 {
			continue
		}
		sum += v
		n++
	}
	if n == 0 {
		return "", false
	}
	mean := sum / float64(n)
	if fig == figTPS {
		return shortRate(mean), true
	}
	return shortDur(time.Duration(mean)), true
}

// tally is what one cell contributes to pass rates, counts and filters.
type tally struct {
	pass, decided uint16
	verdicts      uint16 // decided by the judge in view: PASS, FAIL or WARN
	// awaiting repeats are not decided yet: their inference is not over,
	// or they completed and the judge in view has not given its verdict
	// (not asked yet, queued, or at work).
	awaiting uint16
	flags    cellFlag
}

// cellFlag marks what a status filter looks for.
type cellFlag uint8

const (
	flagFailure cellFlag = 1 << iota
	flagError
	flagDisagree
)

// tallyCell counts the repeats of one cell for the judge in view into c
// (with state.Tally's rules, the run's one count) and returns its pass-rate
// share and flags. A repeat is decided once it failed, errored, or has the
// judge's PASS, FAIL or WARN (or, with no judge, once it completed); a judge
// error or a cancel leaves it out of the rate. With no judge a completed
// repeat passed: the checks alone decide. Every other repeat awaits a
// decision: one still in inference, or a completed one the judge in view
// has not judged, is judging, or has queued.
func tallyCell(cells []*state.Cell, judge string, c *state.Tally) tally {
	var t tally
	for i := range cells {
		cell := cells[i]
		c.Add(cell, judge, 1)
		k := repeatKind(cell, judge)
		switch k {
		case kindPending, kindQueued, kindLoading, kindRunning, kindJudging:
			t.awaiting++
		case kindPass:
			t.pass++
			t.decided++
		case kindOK:
			if judge == "" {
				t.pass++
				t.decided++
			} else {
				t.awaiting++
			}
		case kindFail:
			t.decided++
			t.flags |= flagFailure
		case kindWarn:
			t.decided++
			t.flags |= flagDisagree
		case kindFailed:
			t.decided++
			t.flags |= flagFailure
		case kindErrored:
			t.decided++
			t.flags |= flagError
		case kindJudgeError:
			t.flags |= flagError
		}
		if k == kindPass || k == kindFail || k == kindWarn {
			t.verdicts++
		}
		if j := cell.Judgment(scoring.JuryName); j != nil && j.Jury != nil && j.Jury.Disagreement {
			t.flags |= flagDisagree
		}
	}
	return t
}
