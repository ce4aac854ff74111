package compare

import (
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// Outcome is what a cell came to, for counting.
type Outcome string

const (
	Pass       Outcome = "pass"
	Fail       Outcome = "fail"        // the judge said FAIL, or a check failed
	Warn       Outcome = "warn"        // a split vote or a jury that disagrees
	Error      Outcome = "error"       // the model's request errored (timeout, HTTP, malformed reply)
	JudgeError Outcome = "judge-error" // the judge could not be run or parsed
	// Unfinished and Unjudged cells are pending: their outcome may still
	// be either. A rate never counts them as failures (see Counts.Known).
	Unfinished Outcome = "pending"  // its inference is not over
	Unjudged   Outcome = "unjudged" // completed; the judge in view has given no verdict (yet)
	None       Outcome = "none"     // cancelled or never run: it says nothing
)

// Pending reports whether an outcome is still to come.
func (o Outcome) Pending() bool { return o == Unfinished || o == Unjudged }

// Decided reports whether an outcome counts as a trial in a pass rate. The
// rule is the grid's: a cell is decided once it failed, errored, or has a
// PASS, FAIL or WARN; a judge error or a cancel leaves it out (neither says
// anything about the model). WARN and errors count as not passed.
func (o Outcome) Decided() bool { return o == Pass || o == Fail || o == Warn || o == Error }

// OutcomeOf is the outcome of a cell from its status and the verdict its
// judge in view gave ("" when none), as runner/history's export holds them:
// a failed cell is Fail with or without a verdict, a completed cell with no
// judge run is judged by its checks alone and carries "pass"; a completed
// cell without a verdict is Unjudged and one still in inference Unfinished.
func OutcomeOf(status, verdict string) Outcome {
	switch state.CellStatus(status) {
	case state.Pending, state.Queued, state.Loading, state.Running:
		return Unfinished
	case state.Failed:
		return Fail
	case state.Errored:
		return Error
	case state.Completed:
		switch scoring.Verdict(verdict) {
		case scoring.Pass:
			return Pass
		case scoring.Fail:
			return Fail
		case scoring.Warn:
			return Warn
		case scoring.Error:
			return JudgeError
		case "":
			return Unjudged
		}
	}
	return None
}

// Judged is the verdict and score of a live cell (a snapshot's) under
// judge, as the export holds them: the judge's, once it is done; "pass"
// and 1 for a completed cell when no judge is in view (its checks alone
// decide); "" and 0 otherwise.
func Judged(c *state.Cell, judge string) (verdict string, score float64) {
	switch {
	case c.Status != state.Completed:
	case judge == "":
		return string(scoring.Pass), 1
	default:
		if j := c.Judgment(judge); j != nil && j.Status == state.JudgmentDone {
			return string(j.Verdict), j.Score
		}
	}
	return "", 0
}

// OutcomeUnder is what a live cell came to under judge (Judged, OutcomeOf).
func OutcomeUnder(c *state.Cell, judge string) Outcome {
	v, _ := Judged(c, judge)
	return OutcomeOf(string(c.Status), v)
}

// ByJudge reports whether an outcome of a cell with verdict was the judge
// in view's (judge "" is the checks alone, never a judge).
func ByJudge(judge, status, verdict string) bool {
	if judge == "" || state.CellStatus(status) != state.Completed {
		return false
	}
	switch scoring.Verdict(verdict) {
	case scoring.Pass, scoring.Fail, scoring.Warn:
		return true
	}
	return false
}

// Cell is one (model, test, repeat) of a run as compare reads it.
type Cell struct {
	Model   string
	Test    string
	Repeat  int
	Outcome Outcome
	// Judged says the judge in view gave the outcome (PASS, FAIL or WARN),
	// not the checks or the server: what Counts.Known asks of a rate.
	Judged bool
	// Score is the cell's score in [0, 1] for the judge in view: the
	// judge's score, 1 for a completed cell with no judge, 0 for a failed
	// or errored one.
	Score float64

	Latency, TTFT                  time.Duration // zero when unknown
	TokensPerSec                   float64
	PromptTokens, CompletionTokens int

	// Verdicts by judge (each judge's own, not the jury's), for agreement.
	Verdicts map[string]string
}

// Run is one run's cells and what is known of its battery.
type Run struct {
	ID     string
	Name   string
	Judge  string   // the judge in view ("" when checks alone decide)
	Judges []string // every judge of the run, in config order
	Models []string
	Tests  []string
	// Categories maps a test to its category; a test without one is in
	// NoCategory.
	Categories map[string]string
	Cells      []Cell
}

// NoCategory is the category of a test whose category is unknown.
const NoCategory = "—"

func (r *Run) category(test string) string {
	if c := r.Categories[test]; c != "" {
		return c
	}
	return NoCategory
}

// cellKey is a cell's place in a run, with or without its model.
type cellKey struct {
	model, test string
	repeat      int
}
