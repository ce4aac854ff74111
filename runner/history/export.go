package history

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// Export is the JSON export of a run (the contract other tools read: fields
// may be added, never renamed).
type Export struct {
	Run      ExportRun       `json:"run"`
	Judge    string          `json:"judge"` // whose verdicts `verdict` holds ("" with no judge)
	Models   []string        `json:"models"`
	Tests    []string        `json:"tests"`
	Cells    []ExportCell    `json:"cells"`
	Requests []ExportRequest `json:"requests"`
	Summary  ExportSummary   `json:"summary"`
}

// ExportRun is the run's header.
type ExportRun struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	ScoringMode string     `json:"scoring_mode"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at"`
}

// ExportCell is one cell. Verdict is the judge's verdict on a completed
// cell (pass with no judge), fail on a cell its checks failed, and null
// otherwise.
type ExportCell struct {
	Model            string                   `json:"model"`
	Test             string                   `json:"test"`
	Repeat           int                      `json:"repeat"`
	Status           string                   `json:"status"`
	Verdict          *string                  `json:"verdict"`
	Score            *float64                 `json:"score"`
	Output           string                   `json:"output"`
	ToolCalls        json.RawMessage          `json:"tool_calls,omitempty"`
	Checks           json.RawMessage          `json:"checks,omitempty"`
	LatencyMS        int64                    `json:"latency_ms"`
	TTFTMS           int64                    `json:"ttft_ms"`
	CompletionTokens int                      `json:"completion_tokens"`
	Server           string                   `json:"server"`
	ErrorClass       string                   `json:"error_class"`
	Error            string                   `json:"error"`
	Judgments        map[string]ExportVerdict `json:"judgments,omitempty"`
}

// ExportVerdict is one judge's verdict on a cell.
type ExportVerdict struct {
	Verdict string  `json:"verdict"`
	Score   float64 `json:"score"`
	Error   string  `json:"error,omitempty"`
}

// ExportRequest is one ledger request.
type ExportRequest struct {
	ID               int64  `json:"id"`
	Purpose          string `json:"purpose"`
	Server           string `json:"server"`
	Model            string `json:"model"`
	Test             string `json:"test,omitempty"`
	Judge            string `json:"judge,omitempty"`
	Attempt          int    `json:"attempt"`
	Status           string `json:"status"`
	LatencyMS        int64  `json:"latency_ms"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	ErrorClass       string `json:"error_class"`
}

// ExportSummary counts cells by status and by verdict.
type ExportSummary struct {
	Cells     int            `json:"cells"`
	ByStatus  map[string]int `json:"by_status"`
	ByVerdict map[string]int `json:"by_verdict"`
	Requests  map[string]int `json:"requests_by_purpose"`
}

// BuildExport reads a run from the ledger. id may be "last" or a prefix;
// judgeName "" takes the run's own judge.
func BuildExport(led *ledger.Ledger, id, judgeName string) (*Export, error) {
	run, cells, verdicts, err := readRun(led, id)
	if err != nil {
		return nil, err
	}
	reqs, err := led.Requests(run.ID)
	if err != nil {
		return nil, err
	}
	if judgeName == "" {
		plan, err := Plan(run)
		if err != nil {
			return nil, err
		}
		judgeName = plan.InView
	}
	type ck struct {
		m, t string
		r    int
	}
	byCell := map[ck]map[string]ExportVerdict{}
	for _, v := range verdicts {
		k := ck{v.Model, v.Test, v.Repeat}
		if byCell[k] == nil {
			byCell[k] = map[string]ExportVerdict{}
		}
		byCell[k][v.Judge] = ExportVerdict{Verdict: v.Verdict, Score: v.Score, Error: v.Error}
	}
	x := &Export{
		Run:   ExportRun{ID: run.ID, Name: run.Name, Status: run.Status, ScoringMode: run.ScoringMode, StartedAt: run.StartedAt},
		Judge: judgeName, Models: run.Models, Tests: run.Tests,
		Summary: ExportSummary{ByStatus: map[string]int{}, ByVerdict: map[string]int{}, Requests: map[string]int{}},
	}
	if !run.EndedAt.IsZero() {
		e := run.EndedAt
		x.Run.EndedAt = &e
	}
	order := map[string]int{}
	for i, t := range run.Tests {
		order["t:"+t] = i
	}
	for i, m := range run.Models {
		order["m:"+m] = i
	}
	sort.SliceStable(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		if order["t:"+a.Test] != order["t:"+b.Test] {
			return order["t:"+a.Test] < order["t:"+b.Test]
		}
		if order["m:"+a.Model] != order["m:"+b.Model] {
			return order["m:"+a.Model] < order["m:"+b.Model]
		}
		return a.Repeat < b.Repeat
	})
	for _, c := range cells {
		ec := ExportCell{Model: c.Model, Test: c.Test, Repeat: c.Repeat, Status: c.Status, Output: c.Output,
			LatencyMS: c.Latency.Milliseconds(), TTFTMS: c.TTFT.Milliseconds(), CompletionTokens: c.CompletionTokens,
			Server: c.Server, ErrorClass: c.ErrorClass, Error: c.Error, Judgments: byCell[ck{c.Model, c.Test, c.Repeat}]}
		if c.ToolCalls != "" {
			ec.ToolCalls = json.RawMessage(c.ToolCalls)
		}
		if c.Checks != "" {
			ec.Checks = json.RawMessage(c.Checks)
		}
		switch c.Status {
		case string(state.Completed):
			if judgeName == "" {
				ec.Verdict, ec.Score = ptr(string(scoring.Pass)), ptr(1.0)
			} else if v, ok := ec.Judgments[judgeName]; ok {
				ec.Verdict, ec.Score = ptr(v.Verdict), ptr(v.Score)
			}
		case string(state.Failed):
			ec.Verdict, ec.Score = ptr(string(scoring.Fail)), ptr(0.0)
		}
		x.Cells = append(x.Cells, ec)
		x.Summary.Cells++
		x.Summary.ByStatus[c.Status]++
		if ec.Verdict != nil {
			x.Summary.ByVerdict[*ec.Verdict]++
		} else {
			x.Summary.ByVerdict["none"]++
		}
	}
	for _, q := range reqs {
		x.Requests = append(x.Requests, ExportRequest{ID: q.ID, Purpose: q.Purpose, Server: q.Server, Model: q.Model,
			Test: q.Test, Judge: q.Judge, Attempt: q.Attempt, Status: q.Status, LatencyMS: q.Latency.Milliseconds(),
			PromptTokens: q.PromptTokens, CompletionTokens: q.CompletionTokens, ErrorClass: q.ErrorClass})
		x.Summary.Requests[q.Purpose]++
	}
	return x, nil
}

func ptr[T any](v T) *T { return &v }

// WriteExport writes a run's export in a format (json for now).
func WriteExport(w io.Writer, led *ledger.Ledger, id, judgeName, format string) error {
	switch format {
	case "", "json":
	default:
		return fmt.Errorf("export format %q is not supported yet (use json)", format)
	}
	x, err := BuildExport(led, id, judgeName)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(x)
}
