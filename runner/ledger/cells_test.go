package ledger

import (
	"reflect"
	"testing"
	"time"
)

func TestCellsRoundTripAndUpsertInPlace(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	full := CellRow{
		RunID: "r1", Model: "qwen3-8b", Test: "t1", Repeat: 0, Status: "completed",
		Server: "gpu0", Output: "out", Reasoning: "why", ToolCalls: `[{"name":"f"}]`,
		Checks: `[{"type":"contains","pass":true}]`, ErrorClass: "", Error: "", Attempts: 2,
		PromptTokens: 10, CompletionTokens: 20, TTFT: 250 * time.Microsecond,
		Latency: 1234567 * time.Microsecond, TokensPerSec: 16.2,
	}
	puts := []CellRow{
		{RunID: "r1", Model: "qwen3-8b", Test: "t1", Status: "pending"},
		{RunID: "r1", Model: "gemma", Test: "t1", Status: "error", ErrorClass: "http", Error: "502"},
		{RunID: "r1", Model: "qwen3-8b", Test: "t1", Repeat: 1, Status: "failed"},
		{RunID: "r2", Model: "qwen3-8b", Test: "t1", Status: "cancelled"},
		full, // replaces the first, and keeps its place
	}
	for _, c := range puts {
		if err := l.PutCell(c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Cells("r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []CellRow{full, puts[1], puts[2]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Cells(r1):\n got %+v\nwant %+v", got, want)
	}
	if got, err := l.Cells("none"); err != nil || len(got) != 0 {
		t.Errorf("Cells of an unknown run = %v, %v", got, err)
	}
}

func TestVerdictsRoundTripPerJudgeAndUpsertOnRejudge(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	at := ms("2026-11-21T15:43:00.250Z")
	gemma := VerdictRow{RunID: "r1", Model: "m", Test: "t1", Repeat: 0, Judge: "gemma",
		Verdict: "pass", Score: 0.9, Agreement: 2.0 / 3, Detail: `{"samples":[1,1,0]}`,
		Source: "live", LatencyMS: 812, At: at}
	qwen := VerdictRow{RunID: "r1", Model: "m", Test: "t1", Repeat: 0, Judge: "qwen",
		Verdict: "error", Error: "judge parse error: no VERDICT line", Source: "live", At: at}
	jury := VerdictRow{RunID: "r1", Model: "m", Test: "t1", Repeat: 0, Judge: "jury",
		Verdict: "warn", Score: 0.45, Detail: `{"stddev":0.45}`, Source: "live", At: at}
	rejudged := gemma
	rejudged.Verdict, rejudged.Score, rejudged.Source, rejudged.At = "fail", 0.1, "cache", time.Time{}
	other := VerdictRow{RunID: "r2", Model: "m", Test: "t1", Judge: "gemma", Verdict: "pass"}

	for _, v := range []VerdictRow{gemma, qwen, jury, other, rejudged} {
		if err := l.PutVerdict(v); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Verdicts("r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []VerdictRow{rejudged, qwen, jury}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Verdicts(r1):\n got %+v\nwant %+v", got, want)
	}
}
