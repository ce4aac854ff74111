package importrun

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pitwall/runner/history"
	"pitwall/runner/state"
)

// A promptfoo config whose tests prompt-prix and pitwall name differently:
// pitwall reads vars.test_id, prompt-prix only metadata.test_id, else the
// description as a slug cut at 50 characters, else promptfoo_N; a repeat
// gets -2.
const ppPromptfooBattery = `description: a promptfoo battery prompt-prix ran
prompts:
  - "{{system}}\n\nUser: {{user}}"
tests:
  - description: "Basic Tool Call (Sanity Check)"
    vars: {test_id: basic_tool_call, system: "Be brief.", user: "Say Tokyo"}
    assert: [{type: contains, value: Tokyo}]
  - description: "Named by metadata"
    metadata: {test_id: meta_named}
    vars: {system: "Be brief.", user: "Say Paris"}
    assert: [{type: contains, value: Paris}]
  - description: "A description long enough that prompt-prix cuts its slug at fifty characters"
    vars: {system: "Be brief.", user: "Say Rome"}
    assert: [{type: contains, value: Rome}]
  - description: "Basic Tool Call (Sanity Check)"
    vars: {test_id: basic_again, system: "Be brief.", user: "Say Oslo"}
    assert: [{type: contains, value: Oslo}]
  - vars: {test_id: nameless, system: "Be brief.", user: "Say Lima"}
    assert: [{type: contains, value: Lima}]
`

// TestImportPromptPrixResultsOfAPromptfooBattery: prompt-prix's results for
// a promptfoo config carry the ids prompt-prix derives; each cell lands on
// the battery's test they name.
func TestImportPromptPrixResultsOfAPromptfooBattery(t *testing.T) {
	dir := t.TempDir()
	battery := filepath.Join(dir, "tools.promptfoo.yaml")
	if err := os.WriteFile(battery, []byte(ppPromptfooBattery), 0o644); err != nil {
		t.Fatal(err)
	}
	// prompt-prix's id → the reply, and pitwall's id for the same test.
	cases := []struct{ pp, reply, pitwall string }{
		{"basic-tool-call-sanity-check", "Tokyo", "basic_tool_call"},
		{"meta_named", "Paris", "meta_named"},
		{"a-description-long-enough-that-prompt-prix-cuts-it", "Rome", "a-description-long-enough-that-prompt-prix-cuts-its-slug-at-fifty-characters"},
		{"basic-tool-call-sanity-check-2", "Oslo", "basic_again"},
		{"promptfoo_5", "Lima", "nameless"},
	}
	var tests []string
	var results []map[string]any
	for _, c := range cases {
		tests = append(tests, c.pp)
		results = append(results, map[string]any{"test_id": c.pp, "model_id": "qwen3-8b", "status": "completed",
			"response": "It is " + c.reply + ".", "latency_ms": 100.0, "error": nil, "failure_reason": nil})
	}
	file := writeJSON(t, filepath.Join(dir, "results.json"), map[string]any{"tests": tests, "models": []string{"qwen3-8b"}, "results": results})
	led := openLedger(t, dir)
	sum, err := Import(led, file, Options{Battery: battery, Now: fixedNow})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	b, err := history.LoadSnapshot(led, sum.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		ti := slices.IndexFunc(b.Tests, func(i state.TestInfo) bool { return i.ID == c.pitwall })
		if ti < 0 {
			t.Errorf("prompt-prix's %s: no test %q in the run (tests %v)", c.pp, c.pitwall, b.Tests)
			continue
		}
		cell := b.Cell(ti, 0, 0)
		if cell.Status != state.Completed || cell.Said().Output != "It is "+c.reply+"." {
			t.Errorf("prompt-prix's %s on %s: %s %q, want its reply, passing the test's contains %q", c.pp, c.pitwall, cell.Status, cell.Said().Output, c.reply)
		}
	}
}
