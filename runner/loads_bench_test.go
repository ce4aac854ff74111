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
	preload string // "" starts with nothing resident
	// judge, when set, is a judge model (one of models): the run is judged
	// by it, one sample per cell.
	judge string
	// detectKind leaves kind out of the fleet's config: it is detected.
	detectKind bool
}

// minLoads is the fewest loads the scenario allows: every model not
// resident at the start, once (a judge that is also tested runs its
// inference last and stays for the judging).
func (s jitScenario) minLoads() int {
	n := 0
	for _, m := range s.models {
		if m != s.preload {
			n++
		}
	}
	return n
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
	preload := ""
	if s.preload != "" {
		preload = fmt.Sprintf("preload = [%q]", s.preload)
	}
	scoring := ""
	if s.judge != "" {
		scoring = fmt.Sprintf("[scoring]\nmode = \"judge\"\n[[scoring.judges]]\nname = \"j\"\nmodel = %q\nserver = \"any\"\n", s.judge)
	}
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
  %s
  gpus = [{ vram_gb = 24 }]
%s`, quoted, filepath.Join(dir, "ledger.db"), models.String(), quoted, s.backend, preload, scoring)
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
		Servers: []des.Server{{Name: "gpu0", Slots: 2, VRAMGB: 24, LoadGBps: 4}}}
	if s.preload != "" {
		sc.Servers[0].Preload = []string{s.preload}
	}
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
	h := newHarnessWith(t, cfg, harnessOptions{detectKind: s.detectKind, judgeModels: true})
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

// placementRepeats is how often each placement scenario below runs: the
// fault they guard against showed in 4 runs of 5, a race between the
// fleet's probes and its first decision.
const placementRepeats = 5

// TestRunLoadsTheMinimumWithKindDetected: a server whose kind is left out
// (detected by probing, as configs that init writes have it) is known to
// hold its preloaded model before the first decision, so the run starts
// with it and loads only the others.
func TestRunLoadsTheMinimumWithKindDetected(t *testing.T) {
	t.Parallel()
	for _, backend := range jitBackends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := jitScenario{backend: backend, models: []string{"a", "b", "c"}, tests: 6, preload: "c", detectKind: true}
			for i := range placementRepeats {
				if got := s.realLoads(t); got != s.minLoads() {
					t.Errorf("run %d: %d loads, the minimum is %d", i+1, got, s.minLoads())
				}
			}
		})
	}
}

// TestJudgeAlsoTestedLoadsOnce: a judge model that is also tested runs its
// inference last and stays for the judging, with kind given or detected,
// whether or not a model is resident at the start: a, c, b then b judging
// (3 loads), not a, b, c, b (4).
func TestJudgeAlsoTestedLoadsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		preload, judge string
		detect         bool
	}{
		{"nothing resident", "", "a", false},
		{"nothing resident, kind detected", "", "a", true},
		{"another model resident", "c", "a", false},
		{"another model resident, kind detected", "c", "a", true},
		{"the judge resident", "a", "a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := jitScenario{backend: sim.BackendOllama, models: []string{"a", "b", "c"}, tests: 4,
				preload: tc.preload, judge: tc.judge, detectKind: tc.detect}
			want := s.minLoads()
			if tc.preload == tc.judge {
				// Resident at the start, it runs first; the judging then
				// needs it once more.
				want++
			}
			for i := range placementRepeats {
				if got := s.realLoads(t); got != want {
					t.Errorf("run %d: %d loads, the minimum is %d", i+1, got, want)
				}
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

// A run handed over in windows, model by model, hands a judge model that
// is also tested over last, so that the judging finds it loaded. (Not
// parallel: it narrows the window every run reads.)
func TestWindowedRunHandsAJudgeModelOverLast(t *testing.T) {
	w := inferenceWindow
	t.Cleanup(func() { inferenceWindow = w }) // after the runs are closed (cleanups run last first)
	inferenceWindow = 4
	s := jitScenario{backend: sim.BackendOllama, models: []string{"a", "b", "c"}, tests: 4, judge: "a"}
	for i := range placementRepeats {
		if got := s.realLoads(t); got != s.minLoads() {
			t.Errorf("run %d: %d loads, the minimum is %d", i+1, got, s.minLoads())
		}
	}
}
