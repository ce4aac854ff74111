package scoring

// Verdict is a judged cell's outcome.
type Verdict string

const (
	Pass  Verdict = "pass"
	Fail  Verdict = "fail"
	Warn  Verdict = "warn"  // split samples or jury disagreement
	Error Verdict = "error" // the judge could not be run or parsed
)

// Sample is one judge vote.
type Sample struct {
	Raw       string  `json:"raw"`
	Reasoning string  `json:"reasoning,omitempty"`
	Pass      bool    `json:"pass"`
	Score     float64 `json:"score"`
	Reason    string  `json:"reason,omitempty"`
	ParseErr  string  `json:"parse_error,omitempty"`
}

// JudgeResult is one judge's vote over k samples.
type JudgeResult struct {
	Judge     string   `json:"judge"`
	Weight    float64  `json:"weight"`
	Samples   []Sample `json:"samples"`
	Score     float64  `json:"score"`     // mean of the parsed samples
	Agreement float64  `json:"agreement"` // share of samples agreeing with the majority
	Verdict   Verdict  `json:"verdict"`
}

// JuryResult aggregates several judges.
type JuryResult struct {
	Judges       []JudgeResult `json:"judges"`
	Score        float64       `json:"score"`
	StdDev       float64       `json:"stddev"` // weighted standard deviation of judges' scores
	Spread       float64       `json:"spread"` // max - min of judges' scores
	Verdict      Verdict       `json:"verdict"`
	Disagreement bool          `json:"disagreement"`
	// Agreement is the weighted share of the judges whose verdict is the
	// Decision.
	Agreement float64 `json:"agreement"`
	// Decision is the verdict the aggregation method reaches before
	// disagreement is considered: Verdict is Warn on Disagreement and
	// Decision otherwise (see Aggregate).
	Decision Verdict `json:"decision,omitempty"`
}

// CheckResult is the outcome of one deterministic check or reply validation
// (judge/check makes them; a cell carries them for the grid and the
// exports to draw).
type CheckResult struct {
	Name   string `json:"name"` // e.g. "contains \"Paris\"", "not-empty", "tool_choice=required"
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"` // why it failed, in words a user can act on
}
