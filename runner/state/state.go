package state

import (
	"slices"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/telemetry"

	"pitwall/judge/scoring"
)

// CellStatus is where a cell stands in phase 1.
type CellStatus string

const (
	Pending   CellStatus = "pending"
	Queued    CellStatus = "queued"
	Running   CellStatus = "running"
	Loading   CellStatus = "loading" // its server is loading the model
	Completed CellStatus = "completed"
	Failed    CellStatus = "failed" // a check or semantic validation failed (❌)
	Errored   CellStatus = "error"  // transport or server error (⚠️)
	Cancelled CellStatus = "cancelled"
)

// Terminal reports whether the cell's inference is over.
func (s CellStatus) Terminal() bool {
	return s == Completed || s == Failed || s == Errored || s == Cancelled
}

// Phase is the run's current phase.
type Phase string

const (
	PhaseInference Phase = "inference"
	PhaseJudgment  Phase = "judgment"
	PhaseDone      Phase = "done"
)

// RunStatus is the run's status, as the ledger keeps it.
type RunStatus string

const (
	RunRunning   RunStatus = "running"
	RunCompleted RunStatus = "completed"
	RunStopped   RunStatus = "stopped"
	RunFailed    RunStatus = "failed"
)

// JudgmentStatus is where one judge stands on one cell.
type JudgmentStatus string

const (
	JudgmentQueued  JudgmentStatus = "queued"
	JudgmentRunning JudgmentStatus = "running"
	JudgmentDone    JudgmentStatus = "done"
)

// Judgment is one judge's (or the jury's) view of a cell.
type Judgment struct {
	Judge     string
	Status    JudgmentStatus
	Verdict   scoring.Verdict // "" until done
	Score     float64
	Agreement float64
	Samples   []scoring.Sample
	Jury      *scoring.JuryResult // set on the jury's judgment
	Error     string              // judge error message (transport or parse)
	Latency   time.Duration       // judge time, apart from inference time
	Source    string              // live | cache | ledger
}

// Cell is one (model, test, repeat) at an instant. Cells in a snapshot are
// never changed after it is published.
type Cell struct {
	Model  string
	Test   string
	Repeat int

	Status   CellStatus
	Server   string
	Attempts int

	TTFT             time.Duration
	Latency          time.Duration
	PromptTokens     int
	CompletionTokens int
	TokensPerSec     float64

	// Judgments are one per judge, in the order they came; scoring.JuryName
	// holds the aggregate when scoring is a jury. Judgment reads one. A
	// slice, not a map: a cell has one to a few, and a run has many cells.
	Judgments []*Judgment

	// Reply is what the cell's inference said, nil when it said nothing
	// the live state keeps. Read it through Said, change it through
	// EditReply: a published cell's Reply is shared with the copy the
	// runner edits, and a run of 100,000 cells keeps a reply for few of
	// them, so a cell is a third of the size it would be with the texts
	// inline.
	Reply *Reply

	// Clipped says the live state keeps less than the ledger has of the
	// cell's texts (output, reasoning, tool calls, checks, judge replies):
	// a finished cell keeps none of them once the ledger has them, unless
	// it errored or is an agent cell. A reader that needs them (the side
	// panel, the detail view, an export) reads them from the ledger, so
	// snapshots stay small whatever the size of the run.
	Clipped bool
}

// Reply is what a cell's inference came to apart from its status and
// figures: the texts, the checks, the error. Published replies are never
// changed.
type Reply struct {
	ErrorClass chat.ErrorClass
	Error      string

	Output       string
	Reasoning    string
	ToolCalls    []chat.ToolCall
	FinishReason string
	Checks       []scoring.CheckResult

	// PromptCut is the model's context when the server cut the prompt to
	// it (chat.Result.PromptCut): the reply is to part of the prompt.
	PromptCut int

	// Steps is an agent test's trajectory, one step per model turn, in
	// order; nil for a test of one request. For an agent cell, Output is
	// the final answer, ToolCalls every call of every step, and the cell's
	// usage and latency fields the sums over its steps (TTFT the first
	// step's).
	Steps []Step
}

// IsZero reports whether r says nothing.
func (r Reply) IsZero() bool {
	return r.ErrorClass == "" && r.Error == "" && r.Output == "" && r.Reasoning == "" && len(r.ToolCalls) == 0 &&
		r.FinishReason == "" && len(r.Checks) == 0 && r.PromptCut == 0 && len(r.Steps) == 0
}

// Said returns what the cell's inference said: the zero Reply when the
// live state keeps none.
func (c *Cell) Said() Reply {
	if c == nil || c.Reply == nil {
		return Reply{}
	}
	return *c.Reply
}

// EditReply returns the cell's reply to change: a copy of it (or a new
// one), set on the cell, since the one it had may be a published
// snapshot's. Take it once per change and set every field on it.
func (c *Cell) EditReply() *Reply {
	r := new(Reply)
	if c.Reply != nil {
		*r = *c.Reply
	}
	c.Reply = r
	return r
}

// Step is one model turn of an agent test's tool loop: one inference
// request, what the model said, and the calls it made with what each was
// answered. A published step is never changed.
type Step struct {
	Content      string // the model's text: its thought, or on the last step its final answer
	Reasoning    string // reasoning the server sent apart
	Calls        []StepCall
	FinishReason string
	Server       string

	TTFT             time.Duration
	Latency          time.Duration
	PromptTokens     int
	CompletionTokens int
}

// StepCall is one tool call of a step and the observation it was answered
// with.
type StepCall struct {
	chat.ToolCall
	Observation string
	// Mocked is true when one of the test's mock_tools answered the call;
	// otherwise Observation is the error the model was shown instead.
	Mocked bool
}

// Cached says the cell's answer was taken from the ledger (`--reuse`), not
// asked of a server: its timings are those of the request it reused.
func (c *Cell) Cached() bool { return c != nil && c.Server == chat.ServerCache }

// Judgment returns the cell's judgment by name, or nil.
func (c *Cell) Judgment(name string) *Judgment {
	if c == nil {
		return nil
	}
	for _, j := range c.Judgments {
		if j.Judge == name {
			return j
		}
	}
	return nil
}

// TestInfo is what the grid and the detail view show of a test.
type TestInfo struct {
	ID        string
	Name      string
	Category  string
	Severity  string // how much a failure matters, as the battery says: critical, warning, info; "" unset
	System    string
	Prompt    string // the user turn(s), rendered
	Tools     []chat.Tool
	Criteria  string
	Reference string
}

// Row holds one test's cells: index model*Repeat + repeat. A published Row,
// and every Cell it points to, is immutable; the runner copies a row's
// pointers and then the one cell it changes (copy on write), so a snapshot
// costs a slice of pointers, and a cell that changed is held twice only
// while an older snapshot still points to it.
type Row struct {
	Cells []*Cell
}

// NewRow makes a row of copies of cells, each an allocation of its own: a
// cell replaced later must not keep its neighbours' memory alive.
func NewRow(cells []Cell) *Row {
	r := &Row{Cells: make([]*Cell, len(cells))}
	for i := range cells {
		c := cells[i]
		r.Cells[i] = &c
	}
	return r
}

// BatteryRun is an immutable snapshot of a run. Readers must not change it.
type BatteryRun struct {
	Seq     uint64 // increases with every snapshot
	ID      string
	Name    string
	Status  RunStatus
	Phase   Phase
	Message string // a short status line: "stopping…", the last run-level error

	Models []string
	Tests  []TestInfo
	Repeat int
	Rows   []*Row // one per test, in Tests order

	// Plan says which judges the run has and whose verdicts the counts and
	// the grid show (Plan.InView).
	Plan scoring.Plan

	Started time.Time
	Ended   time.Time // zero while running

	Counts          Tally // cells, and the verdicts of Plan.InView
	TokensGenerated int64 // completion tokens of completed inference so far
	JudgeInFlight   int   // judge jobs queued or running (re-judging after the end included)
	// JudgePromptsCut counts judge requests whose prompt the server cut
	// to the judge model's context: their verdicts are on part of it.
	JudgePromptsCut int
	// Judging is what the run's judges have spent so far, apart from
	// inference: answers from the cache or shared with another cell cost
	// nothing and are not counted.
	Judging JudgeSpend

	Fleet []telemetry.ServerState

	Final bool // the run has ended; no snapshot follows this one for the run's phases
}

// JudgeSpend is judging's spending: requests sent, their tokens, and the
// cost when every judge that spent has a price.
type JudgeSpend struct {
	Requests         int
	PromptTokens     int64
	CompletionTokens int64
	Cost             float64 // dollars; meaningful when Priced
	Priced           bool
}

// Cell returns the cell of test t, model m and repeat r, or nil.
func (b *BatteryRun) Cell(t, m, r int) *Cell {
	if t < 0 || t >= len(b.Rows) || m < 0 || m >= len(b.Models) || r < 0 || r >= b.Repeat {
		return nil
	}
	return b.Rows[t].Cells[m*b.Repeat+r]
}

// CellRef names a cell.
type CellRef struct {
	Test   string
	Model  string
	Repeat int
}

// SetJudgment replaces one judge's judgment on a cell, or adds it. The
// cell's slice may be shared with a published snapshot, so it is copied,
// never written.
func SetJudgment(c *Cell, j *Judgment) {
	out := make([]*Judgment, 0, len(c.Judgments)+1)
	replaced := false
	for _, v := range c.Judgments {
		if v.Judge == j.Judge {
			v, replaced = j, true
		}
		out = append(out, v)
	}
	if !replaced {
		out = append(out, j)
	}
	c.Judgments = out
}

// DropJudgments removes the named judgments from a cell, copying its slice.
func DropJudgments(c *Cell, names ...string) {
	var out []*Judgment
	for _, v := range c.Judgments {
		if !slices.Contains(names, v.Judge) {
			out = append(out, v)
		}
	}
	c.Judgments = out
}

// Stranded lists the servers that are down with work waiting on them:
// queued jobs that no up server can run.
func (b *BatteryRun) Stranded() []telemetry.ServerState {
	var out []telemetry.ServerState
	for _, s := range b.Fleet {
		if !s.Up && s.Stranded > 0 {
			out = append(out, s)
		}
	}
	return out
}
