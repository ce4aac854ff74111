package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/edges/sim"
	"pitwall/gpu"
	"pitwall/gpu/simspec"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
	"pitwall/runner/state"
)

// testBattery is a small battery of every kind of test the simulator knows.
const testBattery = `
[[tests]]
id = "tool"
category = "tools"
user = "What's the weather in Oslo?"
tool_choice = "required"
reference = 'get_weather({"city": "Oslo"})'
  [[tests.tools]]
  type = "function"
    [tests.tools.function]
    name = "get_weather"
    parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
  [[tests.checks]]
  type = "tool-call"
  name = "get_weather"
  args = { city = "Oslo" }

[[tests]]
id = "json"
category = "json"
user = "Give {\"a\": 1} back as JSON."
response_format = { type = "json_object" }
reference = '{"a": 1}'
  [[tests.checks]]
  type = "is-json"

[[tests]]
id = "math"
category = "reasoning"
user = "What is 6 times 7? Only the number."
reference = "42"
  [[tests.checks]]
  type = "contains"
  value = "42"

[[tests]]
id = "word"
category = "instruction"
user = "Say the word blue."
reference = "blue"
  [[tests.checks]]
  type = "icontains"
  value = "blue"
`

// testConfig writes a config with the given body (after the battery and
// models lines) and loads it.
func testConfig(t *testing.T, body string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(testBattery), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pitwall.toml")
	head := "name = \"test\"\nbattery = \"battery.toml\"\nmodels = [\"good\", \"bad\"]\ndb = " +
		quote(filepath.Join(dir, "ledger.db")) + "\n"
	if err := os.WriteFile(path, []byte(head+body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

func quote(s string) string { return "'" + s + "'" }

// simFleet is the sim part of most test configs: one server offering a
// strong and a weak model and a judge.
const simFleet = `
[run]
timeout = "10s"
retries = 1

[[sim.models]]
name = "good"
skill = 1.0
[[sim.models]]
name = "bad"
skill = 0.01
[[sim.models]]
name = "judge"
judge_error_rate = 0.0

[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["good", "bad", "judge"]
`

// harness is a run with its ledger, simulated servers and fleet, all
// closed when the test ends.
type harness struct {
	sims  *sim.Fleet
	cfg   *config.Config
	led   *ledger.Ledger
	fleet *gpu.Fleet
	run   *Run
}

func newHarness(t testing.TB, cfg *config.Config, instant bool) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, harnessOptions{instant: instant})
}

// harnessOptions are what a harness may do otherwise than newHarness.
type harnessOptions struct {
	instant bool
	// detectKind leaves kind out of the fleet's server configs (the
	// simulators still start as kind = "sim" ones), so the fleet detects it
	// by probing, as for a config written without kind.
	detectKind bool
	// judgeModels tells the fleet the judges' models, as cli does.
	judgeModels bool
}

func newHarnessWith(t testing.TB, cfg *config.Config, o harnessOptions) *harness {
	t.Helper()
	sims, err := sim.StartConfig(cfg, o.instant)
	if err != nil {
		t.Fatal(err)
	}
	if sims != nil {
		t.Cleanup(func() { sims.Close() })
	}
	led, err := ledger.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	servers, err := setup.FleetServers(cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	id := ledger.NewRunID(time.Now())
	if o.detectKind {
		for i := range servers {
			servers[i].Kind = ""
		}
	}
	opts := gpu.Options{Warmup: setup.RecordWarmups(led, id)}
	if o.judgeModels {
		opts.JudgeModels = map[string]bool{}
		for _, j := range cfg.Scoring.Judges {
			opts.JudgeModels[j.Model] = true
		}
	}
	fleet := gpu.NewFleet(servers, opts)
	t.Cleanup(fleet.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, err := range fleet.Discover(ctx) {
		if err != nil {
			t.Fatalf("discover %s: %v", name, err)
		}
	}
	run, err := New(cfg, Options{RunID: id, Fleet: fleet, Ledger: led, Interval: 5 * time.Millisecond,
		Heartbeat: 50 * time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	return &harness{sims: sims, cfg: cfg, led: led, fleet: fleet, run: run}
}

// finish starts the run and waits for its phases to end.
func (h *harness) finish(t testing.TB) *state.BatteryRun {
	t.Helper()
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := h.run.Wait(ctx)
	if !b.Final {
		t.Fatalf("run did not finish: %+v", b.Counts)
	}
	return b
}

func (h *harness) export(t testing.TB) *history.Export {
	t.Helper()
	x, err := history.BuildExport(h.led, h.run.ID(), "")
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// loadConfig loads the config at path, with no environment.
func loadConfig(t testing.TB, path string) *config.Config {
	t.Helper()
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

func specFaultsAll500() simspec.Faults { return simspec.Faults{ErrorRate: 1} }
func specNoFaults() simspec.Faults     { return simspec.Faults{} }
