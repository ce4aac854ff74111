package history

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pitwall/gpu/chat"

	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
)

// Model output that must stay text in every format.
const (
	injected = `<script>window.__pwned=1</script> | <img src=x onerror="window.__pwned=2"></script><script>window.__pwned=3</script>`
	tricky   = "a, \"quoted\" | piped\nsecond line,\r\nthird"
)

// spec is one cell of a fixture run and what its judges said.
type spec struct {
	model, test string
	repeat      int
	status      string
	output      string
	errClass    string
	errMsg      string
	checks      []scoring.CheckResult
	toolCalls   []chat.ToolCall
	verdicts    map[string]string // judge → pass | fail | warn | error
	latency     time.Duration
}

// fixtureCells is a run of two models, two judges and their jury. alpha
// passes all but arithmetic (a split jury); "beta|b" (a pipe in its name)
// fails a check, errors, is judged FAIL on the injected reply, passes the
// tricky one, is cancelled once and has a judge error.
func fixtureCells() []spec {
	pass := map[string]string{"j1": "pass", "j2": "pass", scoring.JuryName: "pass"}
	return []spec{
		{model: "alpha", test: "weather_tool", status: "completed", output: "Calling the weather tool.",
			toolCalls: []chat.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			checks:    []scoring.CheckResult{{Name: "tool-call get_weather", Pass: true}}, verdicts: pass, latency: 210 * time.Millisecond},
		{model: "alpha", test: "pick_tool", status: "completed", output: "search()", verdicts: pass, latency: 190 * time.Millisecond},
		{model: "alpha", test: "json_person", status: "completed", output: `{"name":"Ada"}`, verdicts: pass, latency: 320 * time.Millisecond},
		{model: "alpha", test: "json_list", status: "completed", output: "[1,2,3]", verdicts: pass, latency: 150 * time.Millisecond},
		{model: "alpha", test: "arithmetic", status: "completed", output: "42", latency: 90 * time.Millisecond,
			verdicts: map[string]string{"j1": "pass", "j2": "fail", scoring.JuryName: "warn"}},
		{model: "alpha", test: "summarise", status: "completed", output: "A summary.", verdicts: pass, latency: 400 * time.Millisecond},

		{model: "beta|b", test: "weather_tool", status: "failed", output: "It is sunny.", latency: 250 * time.Millisecond,
			checks: []scoring.CheckResult{{Name: "tool-call get_weather", Pass: false, Reason: "no tool call in the reply"}}},
		{model: "beta|b", test: "pick_tool", status: "error", errClass: "timeout", errMsg: "no reply within 300s"},
		{model: "beta|b", test: "json_person", status: "completed", output: injected, latency: 280 * time.Millisecond,
			verdicts: map[string]string{"j1": "fail", "j2": "fail", scoring.JuryName: "fail"}},
		{model: "beta|b", test: "json_list", status: "completed", output: tricky, verdicts: pass, latency: 175 * time.Millisecond},
		{model: "beta|b", test: "arithmetic", status: "cancelled"},
		{model: "beta|b", test: "summarise", status: "completed", output: "Summary, brief.", latency: 330 * time.Millisecond,
			verdicts: map[string]string{"j1": "error", "j2": "pass", scoring.JuryName: "error"}},
	}
}

// fixtureConfig names the tests' categories the way a run's config record
// may: tests as objects with a category. summarise has none.
const fixtureConfig = `{"name":"demo","tests":[{"id":"weather_tool","category":"tools"},{"id":"pick_tool","category":"tools"},` +
	`{"id":"json_person","category":"json"},{"id":"json_list","category":"json"},{"id":"arithmetic","category":"reasoning"},"summarise"]}`

// newLedger opens a ledger in a temporary folder.
func newLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	led, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	return led
}

// putRun writes a finished run of cells into led through the ledger's API.
func putRun(t *testing.T, led *ledger.Ledger, id string, started time.Time, cells []spec) {
	t.Helper()
	putRunRecord(t, led, id, started, cells, fixtureConfig)
}

// putRunRecord is putRun with the run's config record.
func putRunRecord(t *testing.T, led *ledger.Ledger, id string, started time.Time, cells []spec, configJSON string) {
	t.Helper()
	sc, _ := json.Marshal(map[string]any{"mode": "jury", "judges": []map[string]any{{"name": "j1"}, {"name": "j2"}}})
	var models, tests []string
	repeat := 1
	for _, s := range cells {
		if !slices.Contains(models, s.model) {
			models = append(models, s.model)
		}
		if !slices.Contains(tests, s.test) {
			tests = append(tests, s.test)
		}
		repeat = max(repeat, s.repeat+1)
	}
	err := led.CreateRun(ledger.RunRow{ID: id, Name: "demo", Status: "completed", ScoringMode: "jury",
		ConfigJSON: configJSON, ScoringJSON: string(sc), Models: models, Tests: tests,
		Repeat: repeat, StartedAt: started, EndedAt: started.Add(22 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cells {
		row := ledger.CellRow{RunID: id, Model: s.model, Test: s.test, Repeat: s.repeat, Status: s.status, Server: "gpu0",
			Output: s.output, ErrorClass: s.errClass, Error: s.errMsg, Attempts: 1, PromptTokens: 30, CompletionTokens: 12,
			Latency: s.latency, TTFT: s.latency / 4}
		if s.latency > 0 {
			row.TokensPerSec = 12 / s.latency.Seconds()
		}
		if s.checks != nil {
			row.Checks = mustJSON(t, s.checks)
		}
		if s.toolCalls != nil {
			row.ToolCalls = mustJSON(t, s.toolCalls)
		}
		if err := led.PutCell(row); err != nil {
			t.Fatal(err)
		}
		if s.status != "cancelled" {
			msgs := []chat.Message{{Role: "system", Content: "Answer briefly."}, {Role: "user", Content: "Test " + s.test + ": <b>do it</b>"}}
			req := &ledger.Request{RunID: id, Purpose: ledger.PurposeInference, Server: "gpu0", Model: s.model, Test: s.test,
				Repeat: s.repeat, Attempt: 1, Input: mustJSON(t, msgs), Status: ledger.StatusCompleted, Output: s.output,
				ErrorClass: s.errClass, Error: s.errMsg, Latency: s.latency, QueuedAt: started, StartedAt: started, EndedAt: started}
			if s.status == "error" {
				req.Status = ledger.StatusError
			}
			if _, err := led.InsertRequest(req); err != nil {
				t.Fatal(err)
			}
		}
		for judge, v := range s.verdicts {
			vr := ledger.VerdictRow{RunID: id, Model: s.model, Test: s.test, Repeat: s.repeat, Judge: judge, Verdict: v,
				Score: scoreOf(v), Agreement: 1, Source: "live", At: started}
			if judge == scoring.JuryName {
				vr.Detail = mustJSON(t, scoring.JuryResult{Verdict: scoring.Verdict(v), Score: scoreOf(v), Disagreement: v == "warn",
					Judges: []scoring.JudgeResult{{Judge: "j1", Weight: 1, Score: 1}, {Judge: "j2", Weight: 1, Score: scoreOf(v)}}})
			} else {
				sample := scoring.Sample{Raw: "Reasoning… VERDICT: " + v, Pass: v == "pass", Score: scoreOf(v),
					Reason: judge + " says " + v + " on <i>" + s.test + "</i>"}
				if v == "error" {
					sample.ParseErr = "no VERDICT line"
					vr.Error = "the judge's answer had no verdict"
				}
				vr.Detail = mustJSON(t, scoring.JudgeResult{Judge: judge, Weight: 1, Samples: []scoring.Sample{sample},
					Score: scoreOf(v), Agreement: 1, Verdict: scoring.Verdict(v)})
				req := &ledger.Request{RunID: id, Purpose: ledger.PurposeJudge, Server: "gpu1", Model: "judge-" + judge, Test: s.test,
					Repeat: s.repeat, Judge: judge, Attempt: 1, Input: "[]", Status: ledger.StatusCompleted, Output: sample.Raw,
					Verdict: v, QueuedAt: started, EndedAt: started}
				if _, err := led.InsertRequest(req); err != nil {
					t.Fatal(err)
				}
			}
			if err := led.PutVerdict(vr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func scoreOf(v string) float64 {
	switch v {
	case "pass":
		return 0.9
	case "warn":
		return 0.5
	}
	return 0.1
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var fixtureStart = time.Date(2026, 11, 21, 10, 35, 51, 0, time.UTC)

// fixture is a ledger holding run "r1" and, changed on three cells, "r2".
func fixture(t *testing.T) *ledger.Ledger {
	t.Helper()
	led := newLedger(t)
	putRun(t, led, "20261121-103551-aaaa", fixtureStart, fixtureCells())
	second := fixtureCells()
	for i := range second {
		c := &second[i]
		switch {
		case c.model == "alpha" && c.test == "arithmetic": // warn → pass
			c.verdicts = map[string]string{"j1": "pass", "j2": "pass", scoring.JuryName: "pass"}
		case c.model == "beta|b" && c.test == "weather_tool": // failed → pass
			c.status, c.checks = "completed", nil
			c.verdicts = map[string]string{"j1": "pass", "j2": "pass", scoring.JuryName: "pass"}
		case c.model == "alpha" && c.test == "json_list": // pass → fail
			c.verdicts = map[string]string{"j1": "fail", "j2": "fail", scoring.JuryName: "fail"}
		}
	}
	putRun(t, led, "20261122-090000-bbbb", fixtureStart.Add(24*time.Hour), second)
	return led
}

const (
	run1 = "20261121-103551-aaaa"
	run2 = "20261122-090000-bbbb"
)

// render writes runs from led in a format.
func render(t *testing.T, led *ledger.Ledger, format string, ids ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, led, ids, format, ""); err != nil {
		t.Fatalf("Write %s: %v", format, err)
	}
	return buf.Bytes()
}
