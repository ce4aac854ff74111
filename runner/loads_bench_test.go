package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/des"
	"pitwall/gpu/placement"
	"pitwall/runner/state"
)

// jitScenario is the JIT case: one server with 2 slots and room for
// one model, 3 models × 6 tests, one of them resident at the start. The
// fewest loads possible are 2 (the two models not resident).
type jitScenario struct {
	backend string
	models  []string
	tests   int
	preload string
}

func (s jitScenario) config(t testing.TB) string {
	var battery strings.Builder
	for i := range s.tests {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%d\"\ncategory = \"reasoning\"\nuser = \"What is %d plus %d?\"\nreference = \"%d\"\n\n", i, i, i, 2*i)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(battery.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var models strings.Builder
	for _, m := range s.models {
		fmt.Fprintf(&models, "[[sim.models]]\nname = %q\nsize_gb = 16\ntokens_per_sec = 200\nreply_tokens = 40\n", m)
	}
	quoted := `"` + strings.Join(s.models, `", "`) + `"`
	conf := fmt.Sprintf(`name = "loads"
battery = "battery.toml"
models = [%s]
db = %q
[run]
timeout = "60s"
[sim]
time_scale = 0.02
%s
[[servers]]
name = "gpu0"
kind = "sim"
slots = 2
models = [%s]
  [servers.sim]
  backend = %q
  load_gbps = 4
  preload = [%q]
  gpus = [{ vram_gb = 24 }]
`, quoted, filepath.Join(dir, "ledger.db"), models.String(), quoted, s.backend, s.preload)
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// virtualLoads is the discrete-event simulation's count for the scenario
// under the default policy.
func (s jitScenario) virtualLoads(t testing.TB) int {
	sc := des.Scenario{Rate: sim.StreamRate, Models: map[string]des.Model{},
		Servers: []des.Server{{Name: "gpu0", Slots: 2, VRAMGB: 24, LoadGBps: 4, Preload: []string{s.preload}}}}
	for _, m := range s.models {
		sc.Models[m] = des.Model{SizeGB: 16, TokensPerSec: 200}
	}
	for range s.tests {
		for _, m := range s.models {
			sc.Jobs = append(sc.Jobs, des.Job{Model: m, Purpose: chat.PurposeInference, PromptTokens: 20, ReplyTokens: 40})
		}
	}
	res, err := des.Simulate(sc, placement.Default, des.JudgingTwoPhase)
	if err != nil {
		t.Fatal(err)
	}
	return res.Loads
}

// realLoads runs the scenario through the runner and the fleet against the
// simulator, as a headless run does, and counts the loads its server made.
func (s jitScenario) realLoads(t testing.TB) int {
	cfg := loadConfig(t, s.config(t))
	h := newHarness(t, cfg, false)
	b := h.finish(t)
	if b.Counts.Done() != b.Counts.Cells() || b.Status != state.RunCompleted {
		t.Fatalf("%s: run ended %s with %+v", s.backend, b.Status, b.Counts)
	}
	n := 0
	for _, v := range h.sims.Server("gpu0").Stats().Loads {
		n += int(v)
	}
	return n
}

var jitBackends = []string{sim.BackendLMStudio, sim.BackendOllama, sim.BackendLlamaCpp}

func TestRealPathLoadsEqualTheSimulation(t *testing.T) {
	t.Parallel()
	for _, backend := range jitBackends {
		t.Run(backend, func(t *testing.T) {
			s := jitScenario{backend: backend, models: []string{"a", "b", "c"}, tests: 6, preload: "c"}
			virtual := s.virtualLoads(t)
			if virtual != 2 {
				t.Fatalf("the simulation makes %d loads, the minimum is 2", virtual)
			}
			if real := s.realLoads(t); real != virtual {
				t.Errorf("a real run made %d loads, the simulation %d", real, virtual)
			}
		})
	}
}

// BenchmarkRealPathLoads reports, per JIT backend, the model loads a real
// run made beside the discrete-event simulation's for the same scenario.
//
//	go test -run xxx -bench BenchmarkRealPathLoads -benchtime 1x ./runner/
func BenchmarkRealPathLoads(b *testing.B) {
	for _, backend := range jitBackends {
		b.Run(backend, func(b *testing.B) {
			s := jitScenario{backend: backend, models: []string{"a", "b", "c"}, tests: 6, preload: "c"}
			virtual := s.virtualLoads(b)
			var real int
			for b.Loop() {
				real = s.realLoads(b)
			}
			b.ReportMetric(float64(real), "loads")
			b.ReportMetric(float64(virtual), "virtual-loads")
		})
	}
}
