package config

import (
	"strconv"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/simspec"
	"pitwall/judge/check"
	"pitwall/judge/scoring"
)

// Config is a resolved pitwall configuration with its battery loaded.
type Config struct {
	Path    string   `toml:"-" json:"-"` // the file it came from
	Name    string   `toml:"name" json:"name"`
	Battery string   `toml:"battery" json:"battery"` // as written; resolved against the config's folder
	Models  []string `toml:"models" json:"models"`
	DB      string   `toml:"db" json:"db"` // ledger path (default .pitwall/ledger.db)
	// Ledger is [ledger]: url, a postgres:// URL of a team's shared ledger
	// (it takes db's place; --db and PITWALL_DB override it).
	Ledger Ledger `toml:"ledger" json:"ledger"`
	// AllowOutsideFiles lets the battery name files (a promptfoo file://)
	// outside its own folder: absolute paths, .., symlinks out. Off, such a
	// file is refused at load (File.ReadRef), since what it holds is sent
	// to the servers and kept in the ledger.
	AllowOutsideFiles bool `toml:"allow_outside_files" json:"allow_outside_files,omitempty"`

	Run     Run      `toml:"run" json:"run"`
	Servers []Server `toml:"servers" json:"servers"`
	Scoring Scoring  `toml:"scoring" json:"scoring"`
	Sim     Sim      `toml:"sim" json:"sim"`
	// Prices are what tested models cost, by model name, for the cost of
	// inference in the summary and the export; a model without one is not
	// priced.
	Prices map[string]Price `toml:"prices" json:"prices,omitempty"`

	// Tests is the loaded battery, after --tests filtering.
	Tests []Test `toml:"-" json:"-"`

	// Warnings are things the battery asked for that pitwall loaded but
	// will not act on (promptfoo assertions it cannot run, for one);
	// `pitwall validate` and `run` print them, and the run's record keeps
	// them (RedactedJSON), for `show` and the exports.
	Warnings []string `toml:"-" json:"warnings,omitempty"`

	meta *meta // where fields were written, for messages after Load
}

// Ledger is the [ledger] section.
type Ledger struct {
	URL string `toml:"url" json:"url,omitempty"`
}

// Run holds the per-request parameters and the run's shape.
type Run struct {
	Timeout time.Duration `toml:"timeout" json:"timeout"` // per request, from dispatch (default 300s)
	// MaxWait is how long queued work waits for a server that could run it
	// to come back before it ends unavailable (default 5m; 0 waits for ever).
	MaxWait     time.Duration   `toml:"max_wait" json:"max_wait"`
	MaxTokens   int             `toml:"max_tokens" json:"max_tokens"`
	Temperature float64         `toml:"temperature" json:"temperature"`
	Seed        int             `toml:"seed" json:"seed"`
	Repeat      int             `toml:"repeat" json:"repeat"`   // default 1
	Retries     int             `toml:"retries" json:"retries"` // transient errors only (default 2)
	Judging     scoring.Judging `toml:"judging" json:"judging"` // two-phase | pipelined
	Strict      bool            `toml:"strict" json:"strict"`   // WARN counts as failure for the exit code
	// ReuseInference takes a cell's output from the ledger when the exact
	// request (model, messages, tools, parameters, seed) already completed
	// at temperature 0, instead of calling a server (default off: timing
	// runs need real calls).
	ReuseInference bool `toml:"reuse_inference" json:"reuse_inference"`
	// MaxReplyBytes caps one response body as it arrives (SSE framing
	// included); a reply past it ends ⚠️ too_large, keeping what came before
	// (default 8 MiB, about 30,000 streamed tokens).
	MaxReplyBytes int64 `toml:"max_reply_bytes" json:"max_reply_bytes"`
	// SendToolChoice sends a test's tool_choice to the server even where
	// its battery's tool only validates the reply against it (prompt-prix);
	// unset, each battery's own rule holds (Test.SendsToolChoice).
	SendToolChoice *bool `toml:"send_tool_choice" json:"send_tool_choice,omitempty"`
	// AcceptCutPrompts lets a reply to a prompt the server cut to the
	// model's context be checked as any other; by default such a cell is
	// ⚠️ prompt_cut: the model never saw the whole test.
	AcceptCutPrompts bool `toml:"accept_cut_prompts" json:"accept_cut_prompts,omitempty"`
}

// Server is one OpenAI-compatible endpoint of the fleet.
type Server struct {
	Name      string    `toml:"name" json:"name"`
	URL       string    `toml:"url" json:"url"` // with /v1; for kind = "sim" an optional fixed loopback address
	Kind      chat.Kind `toml:"kind" json:"kind"`
	Slots     int       `toml:"slots" json:"slots"` // default 1
	GPUs      []int     `toml:"gpus" json:"gpus"`
	APIKeyEnv string    `toml:"api_key_env" json:"api_key_env"`
	Models    []string  `toml:"models" json:"models"` // offered models when known up front (required for sim)
	// RPM and TPM are the requests and tokens a minute a hosted API allows
	// this account; pitwall starts no request past them. 0: none set (the
	// API's own rate-limit headers are kept either way).
	RPM int             `toml:"rpm" json:"rpm,omitempty"`
	TPM int             `toml:"tpm" json:"tpm,omitempty"`
	Sim *simspec.Server `toml:"sim" json:"sim,omitempty"`
}

// Scoring says how completed cells are judged.
type Scoring struct {
	Mode               scoring.Mode `toml:"mode" json:"mode"`       // deterministic | judge | jury
	Samples            int          `toml:"samples" json:"samples"` // votes per judge per cell (default 1)
	MinScore           float64      `toml:"min_score" json:"min_score"`
	Aggregation        string       `toml:"aggregation" json:"aggregation"` // mean | median | majority | min
	ReportDisagreement bool         `toml:"report_disagreement" json:"report_disagreement"`
	DisagreementMax    float64      `toml:"disagreement_threshold" json:"disagreement_threshold"` // default 0.3
	Judges             []Judge      `toml:"judges" json:"judges"`
	Active             string       `toml:"active" json:"active"` // judge (or "jury") in view at start
}

// Judge is one LLM judge.
type Judge struct {
	Name      string  `toml:"name" json:"name"`
	Model     string  `toml:"model" json:"model"`
	Server    string  `toml:"server" json:"server"`           // a fleet server, or
	URL       string  `toml:"url" json:"url"`                 // a hosted API with
	APIKeyEnv string  `toml:"api_key_env" json:"api_key_env"` // its key's env var
	Weight    float64 `toml:"weight" json:"weight"`           // default 1
	Template  string  `toml:"template" json:"template"`       // default rubric-v2
	MaxTokens int     `toml:"max_tokens" json:"max_tokens"`   // default 512
	Batch     bool    `toml:"batch" json:"batch"`
	// PriceIn and PriceOut are dollars per million prompt and completion
	// tokens; 0 and 0 leave the judge unpriced (then [prices] for its
	// model is used, if given).
	PriceIn  float64 `toml:"price_in" json:"price_in,omitempty"`
	PriceOut float64 `toml:"price_out" json:"price_out,omitempty"`
}

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	In  float64 `toml:"price_in" json:"price_in"`
	Out float64 `toml:"price_out" json:"price_out"`
}

// Sim holds the simulated fleet's catalogue of models.
type Sim struct {
	TimeScale float64         `toml:"time_scale" json:"time_scale"` // 1 = real time; PITWALL_SIM_TIME_SCALE overrides
	Models    []simspec.Model `toml:"models" json:"models"`
}

// Test is one battery test in the native format.
type Test struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Category string `json:"category,omitempty"`
	// Severity is how much a failure matters, as the battery says:
	// critical, warning or info; "" when it says nothing.
	Severity string `json:"severity,omitempty"`
	System   string `json:"system,omitempty"`
	User     string `json:"user,omitempty"`
	// Messages, when present, is the whole conversation (after System,
	// unless it opens with its own system message); User is then not sent.
	Messages       []chat.Message       `json:"messages,omitempty"`
	Tools          []chat.Tool          `json:"tools,omitempty"`
	ToolChoice     any                  `json:"tool_choice,omitempty"`
	ResponseFormat *chat.ResponseFormat `json:"response_format,omitempty"`
	Criteria       string               `json:"criteria,omitempty"`
	Reference      string               `json:"reference,omitempty"`
	// Expect is the verdict the reply itself must give, for batteries whose
	// models are judges (promptfoo's vars.expected_verdict): PASS, FAIL, ….
	// Loading adds a verdict check for it.
	Expect string        `json:"expect,omitempty"`
	Checks []check.Check `json:"checks,omitempty"`

	// Mode is "" (one request) or ModeAgent: a tool loop in which the
	// model's calls are answered from MockTools until it answers without a
	// call or MaxIterations model turns have passed.
	Mode          string    `json:"mode,omitempty"`
	MaxIterations int       `json:"max_iterations,omitempty"`
	MockTools     MockTools `json:"mock_tools,omitempty"`

	// Dialect is the tool whose semantics the test was written for:
	// "" (pitwall's) or DialectPromptPrix. It decides what prompt-prix
	// decides differently: its tool_choice is validated and never sent
	// (SendsToolChoice), and an agent test may have no tools or mock
	// tools it does not offer, as prompt-prix accepts.
	Dialect string `json:"dialect,omitempty"`

	Source string `json:"-"` // file:line it came from, for messages
	// Aliases are the ids another tool gives the same test when it reads
	// the same file (prompt-prix's reading of a promptfoo config), which
	// an import of that tool's results joins on when its id is not ID.
	Aliases []string `json:"-"`
}

// Error is a configuration or battery error that names where it is and what
// to change. Line is 0 when the format gives none.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
	Hint  string
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	s += ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}
