package ledger

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A ledger written before texts were stored once (schema 5, texts inline,
// cache keys in hex) reads as it did once migrated, through every reader,
// and its rows can be finished and re-put under the new schema.
func TestALedgerOfSchema5ReadsTheSameAfterMigration(t *testing.T) {
	t.Parallel()
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sqliteMigrations[:5] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatal(err)
		}
	}
	judgeKey, inferKey := strings.Repeat("0f", 32), strings.Repeat("a1", 32)
	input := `[{"role":"user","content":"What is 2 plus 2?\nAnswer with the number."}]`
	_, err = db.Exec(`PRAGMA user_version = 5;
		INSERT INTO runs (id, status, started_ms) VALUES ('old', 'completed', 1000);
		INSERT INTO requests (id, run_id, purpose, model, test, input, params, cache_key, status,
			output, reasoning, tool_calls, verdict, queued_ms, ended_ms, candidate_model) VALUES
			(1, 'old', 'inference', 'm', 't', ?1, '{"seed":1}', ?2, 'completed', 'four', 'think', '[{"name":"f"}]', '', 1000, 2000, ''),
			(2, 'old', 'judge', 'j', 't', 'judge this', '', ?3, 'completed', 'VERDICT: PASS', '', '', 'pass', 1000, 3000, 'm'),
			(3, 'old', 'inference', 'm', 'u', ?1, '', 'not-a-hash', 'running', '', '', '', '', 1000, NULL, '');
		INSERT INTO cells (run_id, model, test, repeat, status, output, reasoning, tool_calls, checks)
			VALUES ('old', 'm', 't', 0, 'completed', 'four', 'think', '[{"name":"f"}]', '[{"name":"contains","pass":true}]');
		INSERT INTO verdicts (run_id, model, test, repeat, judge, verdict, detail)
			VALUES ('old', 'm', 't', 0, 'j', 'pass', '{"raw":"VERDICT: PASS"}');`, input, inferKey, judgeKey)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reqs, err := l.Requests("old")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 || reqs[0].Input != input || reqs[0].Params != `{"seed":1}` || reqs[0].Output != "four" ||
		reqs[0].Reasoning != "think" || reqs[0].ToolCalls != `[{"name":"f"}]` || reqs[0].CacheKey != inferKey ||
		reqs[1].CacheKey != judgeKey || reqs[2].CacheKey != "not-a-hash" {
		t.Fatalf("requests read back changed: %+v", reqs)
	}
	if out, ok, err := l.CachedJudgeOutput(judgeKey); err != nil || !ok || out != "VERDICT: PASS" {
		t.Errorf("judge cache of an old row: %q, %v, %v", out, ok, err)
	}
	if r, ok, err := l.CachedInference(inferKey); err != nil || !ok || r.Output != "four" || r.ID != 1 {
		t.Errorf("inference cache of an old row: %+v, %v, %v", r, ok, err)
	}
	if done, err := l.CompletedInference("old"); err != nil || done[CellKey{"m", "t", 0}].Output != "four" {
		t.Errorf("CompletedInference: %+v, %v", done, err)
	}
	if open, err := l.OpenRequests("old"); err != nil || len(open) != 1 || open[0].Input != input {
		t.Errorf("OpenRequests: %+v, %v", open, err)
	}
	cells, err := l.Cells("old")
	if err != nil || len(cells) != 1 || cells[0].Output != "four" || cells[0].Checks != `[{"name":"contains","pass":true}]` {
		t.Errorf("cells: %+v, %v", cells, err)
	}
	if c, err := l.Cell("old", "m", "t", 0); err != nil || c.ToolCalls != `[{"name":"f"}]` {
		t.Errorf("cell: %+v, %v", c, err)
	}
	if vs, err := l.Verdicts("old"); err != nil || len(vs) != 1 || vs[0].Detail != `{"raw":"VERDICT: PASS"}` {
		t.Errorf("verdicts: %+v, %v", vs, err)
	}

	// Old rows written again hold their texts by reference, and read the same.
	open := reqs[2]
	open.Status, open.Output, open.EndedAt = StatusCompleted, "five", time.Now()
	if err := l.FinishRequest(&open); err != nil {
		t.Fatal(err)
	}
	if err := l.PutCell(CellRow{RunID: "old", Model: "m", Test: "t", Status: "failed", Output: "fore"}); err != nil {
		t.Fatal(err)
	}
	var inline string
	if err := l.r.QueryRow(`SELECT output || '|' || (SELECT output FROM cells) FROM requests WHERE id = 3`).Scan(&inline); err != nil || inline != "|" {
		t.Errorf("rewritten rows keep inline text %q (%v)", inline, err)
	}
	if reqs, _ := l.Requests("old"); reqs[2].Output != "five" || reqs[2].Input != input {
		t.Errorf("finished old row reads %+v", reqs[2])
	}
	if cells, _ := l.Cells("old"); cells[0].Output != "fore" || cells[0].Checks != "" {
		t.Errorf("re-put old cell reads %+v", cells[0])
	}
}
