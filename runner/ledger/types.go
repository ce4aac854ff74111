package ledger

import (
	"cmp"
	"encoding/json"
	"pitwall/gpu/chat"
	"time"
)

// Request purposes.
const (
	PurposeInference = "inference"
	PurposeJudge     = "judge"
	PurposeWarmup    = "warmup"
	PurposeProbe     = "probe"
)

// Request statuses.
const (
	StatusQueued    = "queued"
	StatusSubmitted = "submitted" // handed to a provider's Batch API
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusError     = "error"
	StatusCanceled  = "canceled"
	// StatusInterrupted closes a request that was open when the process
	// running its run went away (see reconcile.go); it was never answered.
	StatusInterrupted = "interrupted"
)

// Run statuses the ledger itself reads or writes; the runner also writes
// completed, stopped and failed.
const (
	RunRunning = "running"
	// RunInterrupted is a run whose process went away while it was running
	// (SIGKILL, OOM, power loss): nobody finished it.
	RunInterrupted = "interrupted"
)

// RunRow is one run.
type RunRow struct {
	ID          string
	Name        string
	Status      string // running | completed | stopped | failed | interrupted
	ScoringMode string
	ConfigJSON  string // the resolved config, API keys never included
	ScoringJSON string
	Models      []string
	Tests       []string
	Repeat      int
	StartedAt   time.Time
	EndedAt     time.Time // zero while running
	Message     string    // why it ended as it did: a failed run's reason
	// Owner is the process that runs (or last ran) it, and Heartbeat the
	// last time that process said it was alive (Ledger.Heartbeat). A run
	// with a zero Heartbeat has no owner the ledger can check, and is never
	// reconciled.
	Owner     Owner
	Heartbeat time.Time
	// Generation is the run's fencing token (fence.go): 0 when created, one
	// more at every take-over (ResumeRun). CreateRun ignores it.
	Generation int64
	// ExitCode is what the process that ran it returned, for the end it
	// was recorded at (SetExitCode); nil when none is: a run of an earlier
	// build, one not ended, or one that started again since. CreateRun
	// ignores it.
	ExitCode *int
}

// Request is one request row.
type Request struct {
	ID      int64
	RunID   string
	Purpose string
	Server  string // "" until dispatched
	Model   string // the model asked: for a judge request, the judge's model
	Test    string // the cell it serves
	Repeat  int
	Judge   string // judge name, for judge requests
	Sample  int    // sample index, for judge requests
	Attempt int    // 1 for the first try
	Input   string // the request messages as JSON
	Params  string // temperature, seed, max_tokens, tools... as JSON
	// CacheKey: for a judge request the verdict cache key, for an inference
	// request the reuse key (CachedInference); "" when not cacheable.
	CacheKey string
	BatchID  string
	// CandidateModel is, for a judge request, the tested model of the cell it
	// judges (Model is the judge's); "" for other requests.
	CandidateModel string
	Round          int // judge requests: the judging round (0, then one more per re-judge)

	Status           string
	Output           string
	Reasoning        string
	ToolCalls        string // JSON
	Verdict          string // judge requests: parsed verdict
	ErrorClass       string
	Error            string
	PromptTokens     int
	CompletionTokens int
	TTFT             time.Duration
	Latency          time.Duration

	QueuedAt  time.Time
	StartedAt time.Time
	EndedAt   time.Time
}

// CellRow is the latest state of one cell.
type CellRow struct {
	RunID            string
	Model            string
	Test             string
	Repeat           int
	Status           string // pending | completed | failed | error | cancelled
	Server           string
	Output           string
	Reasoning        string
	ToolCalls        string // JSON
	Checks           string // JSON
	ErrorClass       string
	Error            string
	Attempts         int
	PromptTokens     int
	CompletionTokens int
	TTFT             time.Duration
	Latency          time.Duration
	TokensPerSec     float64
}

// VerdictRow is one judge's (or the jury's) verdict on one cell.
type VerdictRow struct {
	RunID     string
	Model     string
	Test      string
	Repeat    int
	Judge     string
	Verdict   string // pass | fail | warn | error
	Score     float64
	Agreement float64
	Detail    string // JSON: samples, jury result
	Error     string
	Source    string // live | cache | ledger
	LatencyMS int64
	At        time.Time
}

// End fills in how a request ended at at: completed with res, or error
// (canceled when err is a cancellation) with err's class and message. What
// res holds of a failed request (a cut stream's text, its timings) is kept
// too. The one place a request row is finished, for inference, judges and
// warm-ups alike.
func (r *Request) End(at time.Time, res chat.Result, err error) {
	r.EndedAt = at
	r.Server = cmp.Or(res.Server, chat.ServerOf(err), r.Server)
	r.Output, r.Reasoning = res.Content, res.Reasoning
	if len(res.ToolCalls) > 0 {
		if b, jerr := json.Marshal(res.ToolCalls); jerr == nil {
			r.ToolCalls = string(b)
		}
	}
	r.PromptTokens, r.CompletionTokens = res.PromptTokens, res.CompletionTokens
	r.TTFT, r.Latency = res.TTFT, res.Latency
	if err == nil {
		r.Status = StatusCompleted
		return
	}
	r.Status, r.ErrorClass, r.Error = StatusError, string(chat.ClassOf(err)), chat.MessageOf(err)
	if r.ErrorClass == "" {
		r.ErrorClass = string(chat.ClassMalformed)
	}
	if chat.ClassOf(err) == chat.ClassCanceled {
		r.Status = StatusCanceled
	}
}

// Servers a request row names when no server answered it (chat.ServerCache,
// chat.ServerShared).
const (
	ServerCache  = chat.ServerCache
	ServerShared = chat.ServerShared
)
