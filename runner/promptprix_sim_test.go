package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/runner/history"
	"pitwall/runner/state"
)

// reactBenchmark is a battery of the shape of prompt-prix's ReAct benchmark
// (examples/react_file_categorization_benchmark.json): react tests whose
// checks name no tool, an MCP filesystem's tools, and mocks that list
// "[FILE] "/"[DIR] " lines, read files and answer a wrong move with an
// EISDIR error.
const reactBenchmark = `{"test_suite": "react_shape", "prompts": [
  {"id": "categorize_with_dirs", "category": "react_core", "severity": "critical", "mode": "react", "max_iterations": 20,
   "system": "You are a file organization specialist. Read each file, then move it into its category folder. When finished, stop calling tools.",
   "user": "Organize the files in ./categories_test/ into the category folders based on their content.",
   "tools": [
     {"type": "function", "function": {"name": "list_directory", "description": "Entries prefixed with [FILE] or [DIR].", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
     {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
     {"type": "function", "function": {"name": "create_directory", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
     {"type": "function", "function": {"name": "move_file", "parameters": {"type": "object", "properties": {"source": {"type": "string"}, "destination": {"type": "string"}}, "required": ["source", "destination"]}}}],
   "mock_tools": {
     "list_directory": {"./categories_test": "[FILE] ./categories_test/1.txt\n[FILE] ./categories_test/2.txt\n[FILE] ./categories_test/3.txt\n[DIR] ./categories_test/animals\n[DIR] ./categories_test/fruits\n[DIR] ./categories_test/colors"},
     "read_file": {"./categories_test/1.txt": "The zebra is a striped animal native to Africa.", "./categories_test/2.txt": "An apple is a delicious fruit.", "./categories_test/3.txt": "Red is a primary color."},
     "create_directory": {"_default": "Directory created"},
     "move_file": {"_default": "File moved successfully"}},
   "pass_criteria": "Reads all 3 files and moves each to its category.",
   "expected_response": "All 3 files categorized: 1.txt to animals/, 2.txt to fruits/, 3.txt to colors/."},
  {"id": "eisdir_recovery", "category": "error_recovery", "mode": "react", "max_iterations": 15,
   "user": "Move the remaining files in ./docs_test/ into the existing folders.",
   "tools": [
     {"type": "function", "function": {"name": "list_directory", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
     {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
     {"type": "function", "function": {"name": "move_file", "parameters": {"type": "object", "properties": {"source": {"type": "string"}, "destination": {"type": "string"}}, "required": ["source", "destination"]}}}],
   "mock_tools": {
     "list_directory": {"./docs_test": "[FILE] ./docs_test//doc1.md\n[FILE] ./docs_test//doc2.md\n[DIR] ./docs_test//adrs\n[DIR] ./docs_test//notes"},
     "read_file": {"./docs_test/doc1.md": "# ADR-001: Use PostgreSQL (adr)", "./docs_test/doc2.md": "Meeting notes 2024-01-15"},
     "move_file": {"{\"destination\": \"./docs_test/adrs/\", \"source\": \"./docs_test/doc1.md\"}": "Error: EISDIR: illegal operation on a directory", "_default": "File moved successfully"}},
   "expected_response": "Moved doc1.md to adrs/ and doc2.md to notes/."}
]}`

// prompt-prix's ReAct benchmark played by the simulator: a model opens the
// loop with a look at what its task names, works through the [FILE] lines
// (reading, then moving each into the folder its content names), and ends
// with an answer; a model with no skill at loops stagnates. The trajectory
// is on the live cell, in the snapshot `show` reads back, and in the
// exports (JSON steps; CSV and JUnit the calls with their observations).
func TestTheSimulatorPlaysPromptPrixsReActBenchmark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "react.json"), []byte(reactBenchmark), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgText := fmt.Sprintf(`name = "react"
battery = "react.json"
models = ["coherent", "mid", "stuck"]
db = %s
[run]
timeout = "10s"
retries = 1
[[sim.models]]
name = "coherent"
skill = 1.0
[[sim.models]]
name = "mid"
skill = 1.0
skills = { agent = 0.8 }
[[sim.models]]
name = "stuck"
skill = 1.0
skills = { agent = 0.0 }
[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["coherent", "mid", "stuck"]
`, quote(filepath.Join(dir, "ledger.db")))
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, loadConfig(t, path), true)
	b := h.finish(t)

	multi, cells := 0, 0
	for ti := range b.Tests {
		for mi, model := range b.Models {
			c := b.Cell(ti, mi, 0)
			cells++
			if len(c.Said().Steps) > 1 {
				multi++
			}
			pass, reason := loopCheck(t, c)
			switch model {
			case "coherent":
				if !pass || c.Status != state.Completed {
					t.Errorf("coherent × %s: %s, loop %v %q (checks %+v)", c.Test, c.Status, pass, reason, c.Said().Checks)
				}
			case "stuck":
				if pass || !strings.Contains(reason, "stagnation at step 6") {
					t.Errorf("stuck × %s: loop %v %q, want a stagnation once six calls are made", c.Test, pass, reason)
				}
			}
			seen := map[string]bool{}
			for _, s := range c.Said().Steps {
				for _, call := range s.Calls {
					if seen[call.ID] {
						t.Errorf("%s × %s: call id %s twice", model, c.Test, call.ID)
					}
					seen[call.ID] = true
				}
			}
		}
	}
	if multi*4 < cells*3 {
		t.Errorf("%d of %d cells made more than one step, want most", multi, cells)
	}

	coherent := b.Cell(0, 0, 0)
	var calls []string
	for _, s := range coherent.Said().Steps {
		for _, c := range s.Calls {
			calls = append(calls, c.Name+" "+c.Arguments)
		}
	}
	want := []string{
		`list_directory {"path":"./categories_test"}`,
		`read_file {"path":"./categories_test/1.txt"}`,
		`move_file {"destination":"./categories_test/animals/1.txt","source":"./categories_test/1.txt"}`,
		`read_file {"path":"./categories_test/2.txt"}`,
		`move_file {"destination":"./categories_test/fruits/2.txt","source":"./categories_test/2.txt"}`,
		`read_file {"path":"./categories_test/3.txt"}`,
		`move_file {"destination":"./categories_test/colors/3.txt","source":"./categories_test/3.txt"}`,
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("coherent's calls:\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}

	t.Run("show reads the steps back", func(t *testing.T) {
		snap, err := history.LoadSnapshot(h.led, h.run.ID(), "")
		if err != nil {
			t.Fatal(err)
		}
		if got := len(snap.Cell(0, 0, 0).Said().Steps); got != len(coherent.Said().Steps) {
			t.Errorf("%d steps read back, %d live", got, len(coherent.Said().Steps))
		}
	})
	t.Run("the exports", func(t *testing.T) {
		x := h.export(t)
		for _, c := range x.Cells {
			if len(c.Steps) == 0 {
				t.Errorf("%s × %s: no steps exported", c.Model, c.Test)
				continue
			}
			for _, call := range c.Steps[len(c.Steps)-1].Calls {
				if call.Observation == nil {
					t.Errorf("%s × %s: the last step's %s exports no observation", c.Model, c.Test, call.Name)
				}
			}
		}
		for _, format := range []string{"csv", "junit"} {
			var buf bytes.Buffer
			if err := history.WriteExport(&buf, h.led, h.run.ID(), "", format); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "File moved successfully") {
				t.Errorf("the %s export holds no observation of the loop", format)
			}
		}
	})
}
