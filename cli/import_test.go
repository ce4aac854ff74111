package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// importFixture writes a prompt-prix battery of three tests and a results
// export of two models (one with a server prefix) that answered it: calls
// in prompt-prix's rendering and in raw LFM tokens, a text answer where a
// call was required, and an error.
func importFixture(t *testing.T, dir string) (battery, export string) {
	t.Helper()
	tool := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`
	battery = filepath.Join(dir, "battery.json")
	b := `{"prompts": [
  {"id": "tokyo", "category": "tools", "user": "Weather in Tokyo?", "tools": [` + tool + `], "tool_choice": "required",
   "expected": {"tool_name": "get_weather", "params": {"city": "Tokyo"}}},
  {"id": "paris", "category": "tools", "user": "Weather in Paris?", "tools": [` + tool + `], "tool_choice": "required",
   "expected": {"tool_name": "get_weather", "params": {"city": "Paris"}}},
  {"id": "hello", "category": "text", "user": "Say hello.", "expected": {"response_contains": "hello"}}
]}`
	if err := os.WriteFile(battery, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	rendered := "\n**Tool Call:** `get_weather`\n```json\n{\"city\": \"Tokyo\"}\n```\n"
	results := []map[string]any{
		{"test_id": "tokyo", "model_id": "1: qwen3-8b", "status": "completed", "response": rendered, "latency_ms": 812.5},
		{"test_id": "paris", "model_id": "1: qwen3-8b", "status": "completed", "response": "It rains in Paris.", "latency_ms": 300},
		{"test_id": "hello", "model_id": "1: qwen3-8b", "status": "completed", "response": "hello!", "latency_ms": 90},
		{"test_id": "tokyo", "model_id": "lfm2-1.2b", "status": "semantic_failure", "failure_reason": "no tool call",
			"response": `<|tool_call_start|>[get_weather(city="Tokyo")]<|tool_call_end|>`, "latency_ms": 120},
		{"test_id": "paris", "model_id": "lfm2-1.2b", "status": "error", "error": "Timeout waiting for server", "latency_ms": 300000},
		{"test_id": "hello", "model_id": "lfm2-1.2b", "status": "completed", "response": "hello", "latency_ms": 50},
	}
	body, err := json.Marshal(map[string]any{"tests": []string{"tokyo", "paris", "hello"},
		"models": []string{"1: qwen3-8b", "lfm2-1.2b"}, "results": results})
	if err != nil {
		t.Fatal(err)
	}
	export = filepath.Join(dir, "results.json")
	if err := os.WriteFile(export, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return battery, export
}

func runImport(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cmdImport(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var runIDPattern = regexp.MustCompile(`imported run (\S+)`)

func TestImportThenShowAndExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	battery, export := importFixture(t, dir)
	db := filepath.Join(dir, "ledger", "ledger.db")
	code, out, stderr := runImport(export, "--battery", battery, "--db", db, "--name", "prompt-prix tools")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	m := runIDPattern.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no run id in %q", out)
	}
	id := m[1]
	for _, want := range []string{"prompt-prix results export", "2 models × 3 tests: 4 ✓ 1 ❌ 1 ⚠️ 0 ⊘",
		"prompt-prix failed 1 repl(ies); pitwall's checks pass 1 of them (lfm2-1.2b × tokyo)",
		"prompt-prix passed 4 repl(ies); pitwall's checks fail 1 of them (qwen3-8b × paris)",
		filepath.Join(dir, "ledger", "imports", id+".toml"), "pitwall show " + id} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}

	code, out, stderr = inproc(t, "show", id, "--headless", "--db", db)
	if code != 1 { // a check failed and a cell errored: run's exit code
		t.Errorf("show: exit %d, want 1: %s", code, stderr)
	}
	for _, want := range []string{"qwen3-8b", "lfm2-1.2b", "tokyo", "⚠️", "prompt-prix tools"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1: qwen3-8b") {
		t.Errorf("show kept the server prefix:\n%s", out)
	}

	code, out, stderr = inproc(t, "export", id, "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	var x struct {
		Run   struct{ Name, Status string }
		Cells []struct {
			Model, Test, Status, Outcome, Server string
			ToolCalls                            []struct{ Name, Arguments string } `json:"tool_calls"`
			LatencyMS                            int64                              `json:"latency_ms"`
		}
		Requests []any
	}
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	if x.Run.Name != "prompt-prix tools" || x.Run.Status != "completed" || len(x.Cells) != 6 || len(x.Requests) != 0 {
		t.Fatalf("export: run %+v, %d cells, %d requests", x.Run, len(x.Cells), len(x.Requests))
	}
	for _, c := range x.Cells {
		if c.Model == "lfm2-1.2b" && c.Test == "tokyo" {
			if c.Status != "completed" || len(c.ToolCalls) != 1 || c.ToolCalls[0].Arguments != `{"city":"Tokyo"}` {
				t.Errorf("the LFM call: %+v", c)
			}
		}
		if c.Model == "qwen3-8b" && c.Test == "tokyo" && (c.LatencyMS != 812 || c.Server != "(imported)") {
			t.Errorf("latency %d server %q", c.LatencyMS, c.Server)
		}
	}

	code, out, _ = inproc(t, "runs", "--db", db)
	if code != 0 || !strings.Contains(out, id) {
		t.Errorf("runs: exit %d, lacks %s:\n%s", code, id, out)
	}
}

func TestImportRefusesWithUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	battery, export := importFixture(t, dir)
	db := filepath.Join(dir, "ledger.db")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{"--battery", battery, "--db", db}, 2, "name one file"},
		{"two files", []string{export, export, "--battery", battery, "--db", db}, 2, "name one file"},
		{"no battery", []string{export, "--db", db}, 2, "--battery BATTERY"},
		{"a missing file", []string{filepath.Join(dir, "nope.json"), "--battery", battery, "--db", db}, 2, "nope.json"},
		{"a battery as the file", []string{battery, "--battery", battery, "--db", db}, 2, "looks like a battery"},
		{"help", []string{"--help"}, 0, "Usage: pitwall import FILE --battery BATTERY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runImport(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}
