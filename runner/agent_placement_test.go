package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// TestAgentLoopKeepsItsModelBetweenSteps runs two agent cells of two
// models on one simulated JIT GPU with one slot and room for one model.
// Each loop submits its next step only once the previous one has ended, so
// the other model's step is always queued when a step ends: a fleet that
// saw only the one job in flight would swap models at every step (a load
// per step). Placement must see the loop as the work it is and keep its
// model until the loop ends: two loads, one per model, and each model's
// steps in one run.
func TestAgentLoopKeepsItsModelBetweenSteps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	battery := `
[[tests]]
id = "find-port"
category = "files"
mode = "agent"
max_iterations = 8
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
`
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(battery), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`name = "agent-loads"
battery = "battery.toml"
models = ["a", "b"]
db = %q
[run]
timeout = "60s"
[sim]
time_scale = 0.02
[[sim.models]]
name = "a"
size_gb = 16
tokens_per_sec = 400
reply_tokens = 20
skill = 1.0
[[sim.models]]
name = "b"
size_gb = 16
tokens_per_sec = 400
reply_tokens = 20
skill = 1.0
[[servers]]
name = "gpu0"
kind = "sim"
slots = 1
models = ["a", "b"]
  [servers.sim]
  backend = "lmstudio"
  load_gbps = 4
  gpus = [{ vram_gb = 24 }]
`, filepath.Join(dir, "ledger.db"))
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, loadConfig(t, path), false)
	b := h.finish(t)
	for mi, model := range b.Models {
		if c := b.Cell(0, mi, 0); c.Status != state.Completed || len(c.Said().Steps) < 2 {
			t.Fatalf("%s: %s after %d steps, want a completed loop of several steps", model, c.Status, len(c.Said().Steps))
		}
	}

	// The order the steps took the slot in, from the ledger.
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	reqs = slices.DeleteFunc(reqs, func(q ledger.Request) bool { return q.Purpose != ledger.PurposeInference })
	slices.SortStableFunc(reqs, func(x, y ledger.Request) int { return x.StartedAt.Compare(y.StartedAt) })
	var order []string
	for _, q := range reqs {
		order = append(order, q.Model)
	}
	runs := slices.Compact(slices.Clone(order))
	if len(runs) != 2 {
		t.Errorf("steps sent in the order %v: the loops were interleaved, want each model's steps in one run", order)
	}
	loads := 0
	for _, n := range h.sims.Server("gpu0").Stats().Loads {
		loads += int(n)
	}
	if loads != 2 {
		t.Errorf("%d loads for two loops of %d steps, want 2 (one per model)", loads, len(order))
	}
}
