package des

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/internal/refgen"
	"pitwall/gpu/placement"
	"pitwall/gpu/simspec"
)

// referenceScenario is the reference fleet with judge jobs free to run on
// any server, under the simulator's batching.
func referenceScenario(tb testing.TB) Scenario {
	tb.Helper()
	return Reference(sim.StreamRate, false)
}

// BenchmarkReferenceFleet runs the reference fleet in virtual time under
// pitwall's placement.Default and the two baselines, and reports:
//
//	x-lowerbound  pitwall's makespan (two-phase) ÷ the lower bound (LowerBound)
//	loads         model loads pitwall made (two-phase)
//	idle-%        share of GPU time with nothing running under pitwall (two-phase)
//	x-promptprix  the prompt-prix policy's makespan ÷ pitwall's (both two-phase)
//	x-fifo        the FIFO policy's makespan (judging as cells finish) ÷ pitwall's
//	x-pipelined   pitwall's two-phase makespan ÷ its pipelined makespan
//
// Run it with: go test -run xxx -bench BenchmarkReferenceFleet -benchtime 1x ./gpu/
func BenchmarkReferenceFleet(b *testing.B) {
	sc := referenceScenario(b)
	bound, err := LowerBound(sc)
	if err != nil {
		b.Fatal(err)
	}
	var two, piped, pp, ff Result
	for b.Loop() {
		for _, run := range []struct {
			out     *Result
			p       placement.Policy
			judging string
		}{
			{&two, placement.Default, JudgingTwoPhase},
			{&piped, placement.Default, JudgingPipelined},
			{&pp, PromptPrix, JudgingTwoPhase},
			{&ff, FIFO, JudgingPipelined},
		} {
			if *run.out, err = Simulate(sc, run.p, run.judging); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("lower bound %s = work %s + loads %s", bound.Total, bound.Work, bound.Load)
	b.Logf("pitwall\n%s", two.Summary())
	b.Logf("pitwall\n%s", piped.Summary())
	b.Logf("prompt-prix\n%s", pp.Summary())
	b.Logf("fifo\n%s", ff.Summary())
	b.ReportMetric(two.Makespan.Seconds()/bound.Total.Seconds(), "x-lowerbound")
	b.ReportMetric(float64(two.Loads), "loads")
	b.ReportMetric(100*two.IdleShare, "idle-%")
	b.ReportMetric(pp.Makespan.Seconds()/two.Makespan.Seconds(), "x-promptprix")
	b.ReportMetric(ff.Makespan.Seconds()/two.Makespan.Seconds(), "x-fifo")
	b.ReportMetric(two.Makespan.Seconds()/piped.Makespan.Seconds(), "x-pipelined")
}

// TestReferenceScenarioIsTheIssues checks the reference fleet against the
// scenario the benchmark promises: 4 GPUs of 24 GB with 2 slots, 12 models
// of 4–20 GB that load in 10–40 s and decode at 30–120 tokens/s, 200 tests
// with replies of 50–400 tokens, a jury of two judge models.
func TestReferenceScenarioIsTheIssues(t *testing.T) {
	f := refgen.Reference()
	sc := referenceScenario(t)
	if len(sc.Servers) != 4 || len(f.Candidates) != 12 || len(f.Tests) != 200 || len(f.Judges) != 2 {
		t.Fatalf("%d servers, %d models, %d tests, %d judges; want 4, 12, 200, 2", len(sc.Servers), len(f.Candidates), len(f.Tests), len(f.Judges))
	}
	for _, s := range sc.Servers {
		if s.VRAMGB != 24 || s.Slots != 2 {
			t.Errorf("server %s: %.0f GB, %d slots; want 24 GB, 2 slots", s.Name, s.VRAMGB, s.Slots)
		}
	}
	pairs, alone := 0, 0
	for _, m := range f.Candidates {
		load := time.Duration(m.SizeGB / f.LoadGBps * float64(time.Second))
		if m.SizeGB < 4 || m.SizeGB > 20 || load < 10*time.Second || load > 40*time.Second || m.TokensPerSec < 30 || m.TokensPerSec > 120 {
			t.Errorf("model %s: %.1f GB, loads in %s, %.0f tokens/s: outside the scenario", m.Name, m.SizeGB, load, m.TokensPerSec)
		}
		fits := false
		for _, o := range f.Candidates {
			fits = fits || o.Name != m.Name && m.SizeGB+o.SizeGB <= f.VRAMGB
		}
		if fits {
			pairs++
		} else {
			alone++
		}
	}
	if pairs == 0 || alone == 0 {
		t.Errorf("%d models share a GPU with another and %d run alone; want some of each", pairs, alone)
	}
	for _, j := range sc.Jobs {
		if j.Purpose == chat.PurposeInference && (j.ReplyTokens < 50 || j.ReplyTokens > 400) {
			t.Fatalf("a reply of %d tokens, outside 50–400", j.ReplyTokens)
		}
	}
}

// TestReferenceExamplesAreCurrent keeps examples/reference-*.toml equal to
// what the generator writes, and loadable as TOML, so the real path runs
// the scenario the benchmark simulates.
func TestReferenceExamplesAreCurrent(t *testing.T) {
	f := refgen.Reference()
	for name, want := range map[string][]byte{
		refgen.FleetFile:   f.FleetTOML(refgen.BatteryFile),
		refgen.BatteryFile: f.BatteryTOML(),
	} {
		got, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/%s is not what the generator writes: run go run ./gpu/internal/refgen/gen", name)
		}
	}
	var fleet struct {
		Models  []string
		Servers []struct {
			Kind   string
			Slots  int
			Models []string
			Sim    struct {
				Backend  string
				LoadGBps float64 `toml:"load_gbps"`
				GPUs     []struct {
					VRAMGB float64 `toml:"vram_gb"`
				}
			}
		}
		Sim struct{ Models []simspec.Model }
	}
	if _, err := toml.DecodeFile(filepath.Join("..", "..", "examples", refgen.FleetFile), &fleet); err != nil {
		t.Fatal(err)
	}
	if len(fleet.Models) != 12 || len(fleet.Servers) != 4 || len(fleet.Sim.Models) != 14 {
		t.Errorf("fleet file: %d models, %d servers, %d simulated models; want 12, 4, 14", len(fleet.Models), len(fleet.Servers), len(fleet.Sim.Models))
	}
	for _, s := range fleet.Servers {
		if s.Kind != "sim" || s.Sim.Backend != "lmstudio" || s.Slots != 2 || len(s.Models) != 14 ||
			s.Sim.LoadGBps != f.LoadGBps || len(s.Sim.GPUs) != 1 || s.Sim.GPUs[0].VRAMGB != 24 {
			t.Errorf("fleet file: server %+v is not a 24 GB simulated LM Studio of 2 slots offering every model", s)
		}
	}
	var battery struct {
		Tests []struct{ ID, User, Criteria, Reference string }
	}
	if _, err := toml.DecodeFile(filepath.Join("..", "..", "examples", refgen.BatteryFile), &battery); err != nil {
		t.Fatal(err)
	}
	if len(battery.Tests) != 200 || battery.Tests[0] != (struct{ ID, User, Criteria, Reference string }{
		f.Tests[0].ID, f.Tests[0].User, f.Tests[0].Criteria, f.Tests[0].Reference}) {
		t.Errorf("battery file: %d tests, first %+v; want 200, the generator's", len(battery.Tests), battery.Tests[0])
	}
}

func TestReferenceScenarioPinsJudgesAsTheConfigNamesThem(t *testing.T) {
	want := map[string]string{"judge-quick-8g": "gpu0", "judge-deep-14g": "gpu1"}
	for _, pin := range []bool{false, true} {
		judges := 0
		for _, j := range Reference(sim.StreamRate, pin).Jobs {
			wantPin := ""
			if j.Purpose == chat.PurposeJudge {
				judges++
				if pin {
					wantPin = want[j.Model]
				}
			}
			if j.Pinned != wantPin {
				t.Fatalf("pinJudges %v: a %s job pinned to %q, want %q", pin, j.Model, j.Pinned, wantPin)
			}
		}
		if judges != 4800 {
			t.Errorf("pinJudges %v: %d judge jobs, want 2 per cell (4800)", pin, judges)
		}
	}
}
