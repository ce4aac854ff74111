package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"pitwall/internal/outfile"
	"pitwall/judge/scoring"
	"pitwall/runner/compare"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// Export is the JSON export of a run (the contract other tools read: fields
// may be added, never renamed).
type Export struct {
	Run    ExportRun `json:"run"`
	Judge  string    `json:"judge"`  // whose verdicts `verdict` holds ("" with no judge)
	Judges []string  `json:"judges"` // every judge of the run, in config order
	Models []string  `json:"models"`
	Tests  []string  `json:"tests"`
	// Categories and Severities map tests to their category and severity
	// (critical, warning, info), when the run's record in the ledger says
	// (see Record).
	Categories map[string]string `json:"categories,omitempty"`
	Severities map[string]string `json:"severities,omitempty"`
	// Warnings are what the battery asked for that pitwall loaded but did
	// not act on (assertions an importer could not map).
	Warnings []string        `json:"warnings,omitempty"`
	Cells    []ExportCell    `json:"cells"`
	Requests []ExportRequest `json:"requests"`
	Summary  ExportSummary   `json:"summary"`
	// Inference and Judging are the run's requests apart: what each cost
	// in requests, tokens, time and money (cost.go).
	Inference ExportInference `json:"inference"`
	Judging   ExportJudging   `json:"judging"`
	// Comparison ranks the run's models (runner/compare).
	Comparison *compare.Report `json:"comparison,omitempty"`
}

// ExportRun is the run's header.
type ExportRun struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	ScoringMode string     `json:"scoring_mode"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at"`
	// Message says why the run ended as it did: a failed run's reason.
	Message string `json:"message,omitempty"`
	// ExitCode is what the process that ran it returned (gates and
	// interrupts included); absent for runs recorded before pitwall kept
	// it, and for runs that did not end in their process.
	ExitCode *int `json:"exit_code,omitempty"`
}

// ExportCell is one cell. Verdict is the judge's verdict on a completed
// cell (pass with no judge), fail on a cell its checks failed, and null
// otherwise.
type ExportCell struct {
	Model            string          `json:"model"`
	Test             string          `json:"test"`
	Category         string          `json:"category,omitempty"`
	Severity         string          `json:"severity,omitempty"`
	Repeat           int             `json:"repeat"`
	Status           string          `json:"status"`
	Outcome          string          `json:"outcome"` // pass | fail | warn | error | judge-error | none (runner/compare)
	Verdict          *string         `json:"verdict"`
	Score            *float64        `json:"score"`
	Messages         json.RawMessage `json:"messages,omitempty"` // the prompt as last sent
	Output           string          `json:"output"`
	Reasoning        string          `json:"reasoning,omitempty"`
	ToolCalls        json.RawMessage `json:"tool_calls,omitempty"`
	Checks           json.RawMessage `json:"checks,omitempty"`
	LatencyMS        int64           `json:"latency_ms"`
	TTFTMS           int64           `json:"ttft_ms"`
	TokensPerSec     *float64        `json:"tokens_per_sec"` // null where no decode was measured
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	Attempts         int             `json:"attempts"`
	Server           string          `json:"server"`
	ErrorClass       string          `json:"error_class"`
	Error            string          `json:"error"`
	// Judgments by judge name (scoring.JuryName for a jury's aggregate).
	Judgments map[string]ExportVerdict `json:"judgments,omitempty"`
	// Steps is an agent test's trajectory, one model turn each (trajectory.go).
	Steps []ExportStep `json:"steps,omitempty"`
}

// ExportVerdict is one judge's verdict on a cell.
type ExportVerdict struct {
	Verdict   string              `json:"verdict"`
	Score     float64             `json:"score"`
	Agreement float64             `json:"agreement"`
	Error     string              `json:"error,omitempty"`
	Source    string              `json:"source,omitempty"` // live | cache | ledger
	Samples   []scoring.Sample    `json:"samples,omitempty"`
	Jury      *scoring.JuryResult `json:"jury,omitempty"`
}

// ExportRequest is one ledger request.
type ExportRequest struct {
	ID      int64  `json:"id"`
	Purpose string `json:"purpose"`
	Server  string `json:"server"`
	Model   string `json:"model"` // for a judge request, the judge's model
	Test    string `json:"test,omitempty"`
	Repeat  int    `json:"repeat"`
	Judge   string `json:"judge,omitempty"`
	Sample  int    `json:"sample"`
	// CandidateModel is, for a judge request, the tested model of the cell
	// it judges (Test, CandidateModel, Repeat), and Round its judging round
	// (0, then one more per re-judge).
	CandidateModel   string `json:"candidate_model,omitempty"`
	Round            int    `json:"round,omitempty"`
	Attempt          int    `json:"attempt"`
	Status           string `json:"status"`
	LatencyMS        int64  `json:"latency_ms"`
	TTFTMS           int64  `json:"ttft_ms"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	ErrorClass       string `json:"error_class"`
	Error            string `json:"error,omitempty"`
}

// ExportSummary counts cells by status and by verdict, and requests by
// purpose: every attempt written, those sent to a server, and those
// abandoned before sending (given up after max_wait, stopped, cancelled).
// The rest were answered from the cache or by an identical request.
type ExportSummary struct {
	Cells             int            `json:"cells"`
	ByStatus          map[string]int `json:"by_status"`
	ByVerdict         map[string]int `json:"by_verdict"`
	Requests          map[string]int `json:"requests_by_purpose"`
	RequestsSent      map[string]int `json:"requests_sent_by_purpose"`
	RequestsAbandoned map[string]int `json:"requests_abandoned_by_purpose"`
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
	plan, err := Plan(run)
	if err != nil {
		return nil, err
	}
	if judgeName == "" {
		judgeName = plan.InView
	}
	byCell := map[ck]map[string]ExportVerdict{}
	for _, v := range verdicts {
		ev, err := exportVerdict(v)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		k := ck{v.Model, v.Test, v.Repeat}
		if byCell[k] == nil {
			byCell[k] = map[string]ExportVerdict{}
		}
		byCell[k][v.Judge] = ev
	}
	// The prompt of a cell is the input of its last inference attempt.
	prompts := map[ck]json.RawMessage{}
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeInference && json.Valid([]byte(q.Input)) {
			prompts[ck{q.Model, q.Test, q.Repeat}] = json.RawMessage(q.Input)
		}
	}
	trajs := trajectories(reqs)
	rec := RunRecord(run)
	x := &Export{
		Run:   ExportRun{ID: run.ID, Name: run.Name, Status: run.Status, ScoringMode: run.ScoringMode, StartedAt: run.StartedAt, Message: run.Message},
		Judge: judgeName, Judges: plan.Judges, Models: run.Models, Tests: run.Tests,
		Categories: rec.Categories, Severities: rec.Severities, Warnings: rec.Warnings,
		Summary: ExportSummary{ByStatus: map[string]int{}, ByVerdict: map[string]int{}, Requests: map[string]int{},
			RequestsSent: map[string]int{}, RequestsAbandoned: map[string]int{}},
		// An imported run has no requests: an empty list, not null, as
		// every other list of the export.
		Requests: []ExportRequest{},
	}
	x.Run.ExitCode = run.ExitCode
	if x.Judges == nil {
		x.Judges = []string{}
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
		k := ck{c.Model, c.Test, c.Repeat}
		ec := ExportCell{Model: c.Model, Test: c.Test, Category: x.Categories[c.Test], Severity: x.Severities[c.Test], Repeat: c.Repeat, Status: c.Status,
			Messages: prompts[k], Output: c.Output, Reasoning: c.Reasoning,
			LatencyMS: c.Latency.Milliseconds(), TTFTMS: c.TTFT.Milliseconds(), TokensPerSec: perSec(c.TokensPerSec),
			PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, Attempts: c.Attempts,
			Server: c.Server, ErrorClass: c.ErrorClass, Error: c.Error, Judgments: byCell[k]}
		if c.ToolCalls != "" {
			ec.ToolCalls = json.RawMessage(c.ToolCalls)
		}
		if c.Checks != "" {
			ec.Checks = json.RawMessage(c.Checks)
		}
		if steps := trajs[k]; len(steps) > 0 {
			lastObserved(steps, c.ToolCalls)
			ec.Steps = exportSteps(steps)
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
		ec.Outcome = string(outcome(&ec))
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
			Test: q.Test, Repeat: q.Repeat, Judge: q.Judge, Sample: q.Sample, CandidateModel: q.CandidateModel, Round: q.Round,
			Attempt: q.Attempt, Status: q.Status,
			LatencyMS: q.Latency.Milliseconds(), TTFTMS: q.TTFT.Milliseconds(),
			PromptTokens: q.PromptTokens, CompletionTokens: q.CompletionTokens, ErrorClass: q.ErrorClass, Error: q.Error})
		x.Summary.Requests[q.Purpose]++
		switch q.Server {
		case ledger.ServerCache, ledger.ServerShared:
		case "":
			x.Summary.RequestsAbandoned[q.Purpose]++
		default:
			x.Summary.RequestsSent[q.Purpose]++
		}
	}
	usage, err := led.RunUsage(run.ID)
	if err != nil {
		return nil, err
	}
	sp := spending(run, usage)
	x.Inference, x.Judging = sp.Inference, sp.Judging
	return x, nil
}

// ck is a cell's key.
type ck struct {
	m, t string
	r    int
}

// exportVerdict is a verdict row with its samples or jury decoded.
func exportVerdict(v ledger.VerdictRow) (ExportVerdict, error) {
	ev := ExportVerdict{Verdict: v.Verdict, Score: v.Score, Agreement: v.Agreement, Error: v.Error, Source: v.Source}
	if v.Judge == scoring.JuryName {
		var jr scoring.JuryResult
		if err := decode(v.Detail, &jr); err != nil {
			return ev, fmt.Errorf("jury verdict on %s/%s: %w", v.Model, v.Test, err)
		}
		if v.Detail != "" {
			ev.Jury = &jr
		}
		return ev, nil
	}
	var res scoring.JudgeResult
	if err := decode(v.Detail, &res); err != nil {
		return ev, fmt.Errorf("verdict of %s on %s/%s: %w", v.Judge, v.Model, v.Test, err)
	}
	ev.Samples = res.Samples
	return ev, nil
}

func ptr[T any](v T) *T { return &v }

// perSec is a tokens/s figure, nil where none was measured (0).
func perSec(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	return &v
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// CompareRun is the export as runner/compare reads it.
func (x *Export) CompareRun() compare.Run {
	r := compare.Run{ID: x.Run.ID, Name: x.Run.Name, Judge: x.Judge, Judges: x.Judges, Models: x.Models, Tests: x.Tests,
		Categories: x.Categories}
	for _, c := range x.Cells {
		verdict, score := "", 0.0
		if c.Verdict != nil {
			verdict = *c.Verdict
		}
		if c.Score != nil {
			score = *c.Score
		}
		cc := compare.Cell{Model: c.Model, Test: c.Test, Repeat: c.Repeat, Outcome: compare.OutcomeOf(c.Status, verdict),
			Judged: compare.ByJudge(x.Judge, c.Status, verdict), Score: score, Latency: msDuration(c.LatencyMS), TTFT: msDuration(c.TTFTMS), TokensPerSec: deref(c.TokensPerSec),
			PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens}
		if len(c.Judgments) > 0 {
			cc.Verdicts = make(map[string]string, len(c.Judgments))
			for j, v := range c.Judgments {
				cc.Verdicts[j] = v.Verdict
			}
		}
		r.Cells = append(r.Cells, cc)
	}
	return r
}

// WriteExport writes one run's export in a format (see Write).
func WriteExport(w io.Writer, led *ledger.Ledger, id, judgeName, format string) error {
	return Write(w, led, []string{id}, format, judgeName)
}

// ExportFile writes run id's export in format (ParseFormat's names), with
// judge in view, into dir as pitwall-ID.EXT (dir "" is the ledger's folder)
// and says where: the `e` key of the grid, live or reopened.
func ExportFile(led *ledger.Ledger, dir, id, judge, format string) (string, error) {
	f, err := ParseFormat(format)
	if err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	if dir == "" {
		dir = filepath.Dir(led.Path())
	}
	path := filepath.Join(dir, "pitwall-"+id+"."+Extension(f))
	var buf bytes.Buffer
	if err := WriteExport(&buf, led, id, judge, f); err != nil {
		return "", fmt.Errorf("export %s: %w", path, err)
	}
	if err := outfile.Write(path, io.Discard, buf.Bytes()); err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	return path, nil
}
