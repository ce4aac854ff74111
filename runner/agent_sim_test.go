package runner

import (
	"strings"
	"testing"

	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// simAgentBattery holds two agent tasks the simulator's models can play:
// list a folder and handle each file; search, then read what was found.
const simAgentBattery = `
[[tests]]
id = "sort-downloads"
category = "files"
mode = "agent"
max_iterations = 8
user = "Sort the files in downloads/: read each one, then move it to docs/ or images/."
reference = "Sorted the two files."
  [[tests.tools]]
  type = "function"
  function = { name = "list_dir", parameters = { type = "object", properties = { path = { type = "string" } }, required = ["path"] } }
  [[tests.tools]]
  type = "function"
  function = { name = "read_file", parameters = { type = "object", properties = { path = { type = "string" } }, required = ["path"] } }
  [[tests.tools]]
  type = "function"
  function = { name = "move_file", parameters = { type = "object", properties = { src = { type = "string" }, dst = { type = "string" } }, required = ["src", "dst"] } }
  [tests.mock_tools]
  list_dir = { "downloads/" = "a.pdf\nb.png" }
  read_file = { "a.pdf" = "%PDF-1.4 quarterly report", "b.png" = "PNG image 640x480" }
  move_file = { "a.pdf" = "moved a.pdf", "b.png" = "moved b.png" }
  [[tests.checks]]
  type = "tool-call"
  name = "list_dir"
  args = { path = "downloads/" }
  [[tests.checks]]
  type = "tool-call"
  name = "move_file"
  args = { src = "b.png" }

[[tests]]
id = "find-port"
category = "files"
mode = "agent"
user = "Which port does the app listen on? Search the config files and read them."
reference = "8080"
  [[tests.tools]]
  type = "function"
  function = { name = "search_files", parameters = { type = "object", properties = { query = { type = "string" } } } }
  [[tests.tools]]
  type = "function"
  function = { name = "read_file", parameters = { type = "object", properties = { path = { type = "string" } }, required = ["path"] } }
  [tests.mock_tools]
  search_files = { _default = '["app.toml", "db.toml"]' }
  read_file = { "app.toml" = "port = 8080", "db.toml" = "port = 5432" }
  [[tests.checks]]
  type = "tool-call"
  name = "search_files"
  [[tests.checks]]
  type = "tool-call-count"
  name = "read_file"
  value = ">=2"
  [[tests.checks]]
  type = "contains"
  value = "8080"
`

// TestAgentBatteryOnTheSimulator runs agent tests end to end on simulated
// servers: a coherent model works through each task and is judged on its
// trajectory, one that cannot keep a loop going stagnates, and one that
// gets everything wrong fails, one way or another.
func TestAgentBatteryOnTheSimulator(t *testing.T) {
	t.Parallel()
	cfg := agentConfig(t, simAgentBattery, `
[run]
timeout = "10s"
retries = 1

[[sim.models]]
name = "coherent"
skill = 1.0
[[sim.models]]
name = "stuck"
skill = 1.0
skills = { agent = 0.0 }
[[sim.models]]
name = "weak"
skill = 0.01
[[sim.models]]
name = "judge"
judge_error_rate = 0.0

[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["coherent", "stuck", "weak", "judge"]

[scoring]
mode = "judge"
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`, "coherent", "stuck", "weak")
	h := newHarness(t, cfg, true)
	b := h.finish(t)

	wantSteps := map[string]int{"sort-downloads": 6, "find-port": 4}
	steps := 0
	for ti, test := range b.Tests {
		for mi, model := range b.Models {
			c := b.Cell(ti, mi, 0)
			steps += len(c.Said().Steps)
			switch model {
			case "coherent":
				if c.Status != state.Completed || len(c.Said().Steps) != wantSteps[test.ID] {
					t.Errorf("%s × %s: %s after %d steps, want completed after %d (checks %+v)", model, test.ID, c.Status, len(c.Said().Steps), wantSteps[test.ID], c.Said().Checks)
				}
				if j := c.Judgment("j"); j == nil || j.Verdict != scoring.Pass {
					t.Errorf("%s × %s: judgment %+v, want a PASS on its trajectory", model, test.ID, j)
				}
			case "stuck":
				pass, reason := loopCheck(t, c)
				if c.Status != state.Failed || pass || !strings.Contains(reason, "stagnation at step 6") {
					t.Errorf("%s × %s: %s, agent-loop %v %q; want a stagnation at step 6 (prompt-prix waits for six calls)", model, test.ID, c.Status, pass, reason)
				}
			case "weak":
				if c.Status != state.Failed {
					t.Errorf("%s × %s: %s, want failed (checks %+v)", model, test.ID, c.Status, c.Said().Checks)
				}
			}
		}
	}
	x := h.export(t)
	inference := 0
	for _, q := range x.Requests {
		if q.Purpose == ledger.PurposeInference {
			inference++
		}
	}
	if inference != steps {
		t.Errorf("%d inference requests for %d steps: each step is one request", inference, steps)
	}
	for _, c := range x.Cells {
		if c.Model == "coherent" && len(c.Steps) != wantSteps[c.Test] {
			t.Errorf("export: %s × %s has %d steps, want %d", c.Model, c.Test, len(c.Steps), wantSteps[c.Test])
		}
	}
	if state.ExitCode(b, false) != state.ExitFail {
		t.Errorf("exit code %d with failed cells, want 1", state.ExitCode(b, false))
	}
}
