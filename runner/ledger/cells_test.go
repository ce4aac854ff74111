package ledger

import (
	"fmt"
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

// CellsAt reads many cells in a few queries: more than one chunk, a last
// chunk padded, cells in the writer's memory, and a cell never put left out.
func TestCellsAtReadsManyCellsWhole(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[CellKey]CellRow{}
	var keys []CellKey
	for i := range cellsAtChunk + 44 {
		c := CellRow{RunID: "r1", Model: fmt.Sprintf("m%d", i%7), Test: fmt.Sprintf("t%d", i), Repeat: i % 2,
			Status: "completed", Output: fmt.Sprintf("reply %d", i), ToolCalls: `[{"name":"f"}]`, Attempts: 1}
		if err := l.PutCell(c); err != nil {
			t.Fatal(err)
		}
		// The same key in another run, which must not be read.
		if err := l.PutCell(CellRow{RunID: "r2", Model: c.Model, Test: c.Test, Repeat: c.Repeat, Output: "other run"}); err != nil {
			t.Fatal(err)
		}
		k := CellKey{c.Model, c.Test, c.Repeat}
		want[k], keys = c, append(keys, k)
	}
	// A name PostgreSQL cannot hold as it is (stored mapped: pgText),
	// read back under the key it was asked by.
	odd := CellRow{RunID: "r1", Model: "m\x00odd\xff", Test: "t odd", Status: "completed", Output: "odd"}
	if err := l.PutCell(odd); err != nil {
		t.Fatal(err)
	}
	oddKey := CellKey{odd.Model, odd.Test, 0}
	keys = append(keys, oddKey)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Opened again: nothing in the writer's memory, all read from the table.
	l, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	queued := CellRow{RunID: "r1", Model: "mq", Test: "tq", Status: "completed", Output: "just written"}
	l.QueueCell(queued, nil)
	want[CellKey{"mq", "tq", 0}] = queued
	keys = append(keys, CellKey{"mq", "tq", 0}, CellKey{"never", "put", 0})
	got, err := l.CellsAt("r1", keys)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := got[oddKey]; !ok || g.Output != "odd" {
		t.Errorf("the cell with an odd name: got %+v (found %v)", g, ok)
	}
	delete(got, oddKey)
	if len(got) != len(want) {
		t.Errorf("CellsAt read %d cells, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("cell %v:\n got %+v (found %v)\nwant %+v", k, g, ok, w)
		}
	}
	if _, ok := got[CellKey{"never", "put", 0}]; ok {
		t.Error("a cell never put was read")
	}
}
