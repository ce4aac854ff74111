package runner

import (
	"time"

	"pitwall/gpu"
	"pitwall/judge"
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

// Verdict aliases judge.Verdict so that readers of snapshots need not import judge.
type Verdict = judge.Verdict

// Verdicts.
const (
	VerdictPass  = judge.Pass
	VerdictFail  = judge.Fail
	VerdictWarn  = judge.Warn
	VerdictError = judge.Error
)

// JuryName is the name under which a jury's aggregate judgment is kept.
const JuryName = "jury"

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
	Verdict   Verdict // "" until done
	Score     float64
	Agreement float64
	Samples   []judge.Sample
	Jury      *judge.JuryResult // set on the jury's judgment
	Error     string            // judge error message (transport or parse)
	Latency   time.Duration     // judge time, apart from inference time
	Source    string            // live | cache | ledger
}

// Cell is one (model, test, repeat) at an instant. Cells in a snapshot are
// never changed after it is published.
type Cell struct {
	Model  string
	Test   string
	Repeat int

	Status     CellStatus
	Server     string
	Attempts   int
	ErrorClass gpu.ErrorClass
	Error      string

	Output       string
	Reasoning    string
	ToolCalls    []gpu.ToolCall
	FinishReason string
	Checks       []judge.CheckResult

	TTFT             time.Duration
	Latency          time.Duration
	PromptTokens     int
	CompletionTokens int
	TokensPerSec     float64

	// Judgments by judge name; JuryName holds the aggregate when scoring is a jury.
	Judgments map[string]*Judgment
}

// Judgment returns the cell's judgment by name, or nil.
func (c *Cell) Judgment(name string) *Judgment {
	if c == nil || c.Judgments == nil {
		return nil
	}
	return c.Judgments[name]
}

// TestInfo is what the grid and the detail view show of a test.
type TestInfo struct {
	ID        string
	Name      string
	Category  string
	System    string
	Prompt    string // the user turn(s), rendered
	Tools     []gpu.Tool
	Criteria  string
	Reference string
}

// Row holds one test's cells: index model*Repeat + repeat. A published Row is
// immutable; the runner copies a row before changing it (copy on write), so a
// snapshot costs one slice of pointers, not a copy of every cell.
type Row struct {
	Cells []Cell
}

// Counts tallies cells and verdicts (of the judge in view).
type Counts struct {
	Pending, Queued, Running, Completed, Failed, Errored, Cancelled int
	Pass, Fail, Warn, JudgeError, Judged, ToJudge                   int
}

// Done is the number of cells whose inference is over.
func (c Counts) Done() int { return c.Completed + c.Failed + c.Errored + c.Cancelled }

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

	Judges      []string // configured judge names, then JuryName when there are two or more
	ActiveJudge string   // whose verdicts the counts and the grid show
	ScoringMode string

	Started time.Time
	Ended   time.Time // zero while running

	Counts          Counts
	TokensGenerated int64 // completion tokens of completed inference so far
	JudgeInFlight   int   // judge jobs queued or running (re-judging after the end included)

	Fleet []gpu.ServerState

	Final bool // the run has ended; no snapshot follows this one for the run's phases
}

// Cell returns the cell of test t, model m and repeat r, or nil.
func (b *BatteryRun) Cell(t, m, r int) *Cell {
	if t < 0 || t >= len(b.Rows) || m < 0 || m >= len(b.Models) || r < 0 || r >= b.Repeat {
		return nil
	}
	return &b.Rows[t].Cells[m*b.Repeat+r]
}

// CellRef names a cell.
type CellRef struct {
	Test   string
	Model  string
	Repeat int
}

// Aliases of the types a snapshot carries, so that its readers (the UI)
// import runner alone.
type (
	ServerState = gpu.ServerState
	GPUState    = gpu.GPUState
	ToolCall    = gpu.ToolCall
	Tool        = gpu.Tool
	ErrorClass  = gpu.ErrorClass
	CheckResult = judge.CheckResult
	Sample      = judge.Sample
	JudgeResult = judge.JudgeResult
	JuryResult  = judge.JuryResult
)
