package ui

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"pitwall/config"
	"pitwall/edges/sim"
	"pitwall/gpu"
	"pitwall/gpu/simspec"
	"pitwall/runner"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
	"pitwall/runner/state"
)

// runCtrl drives a real runner from the UI, as main's adapter does.
type runCtrl struct{ r *runner.Run }

func (c runCtrl) Stop() { c.r.Stop() }
func (c runCtrl) Rejudge(cells []state.CellRef, judge string) uint64 {
	return c.taken(c.r.Rejudge(cells, judge))
}
func (c runCtrl) RejudgeAll(judge string) uint64 { return c.taken(c.r.RejudgeAll(judge)) }
func (c runCtrl) SwitchJudge(name string) uint64 { return c.taken(c.r.SwitchJudge(name)) }

func (c runCtrl) taken(err error) uint64 {
	c.r.Note(err)
	if b := c.r.Latest(); b != nil {
		return b.Seq
	}
	return 0 // nothing published yet
}
func (c runCtrl) Export(format string) (string, error) { return c.r.Export(format) }

// realRun starts a real run of a small battery on a simulated server.
// slow makes every reply take seconds of simulated decoding.
func realRun(t *testing.T, slow bool) (*runner.Run, *ledger.Ledger) {
	t.Helper()
	run, led, _ := realRunSims(t, slow)
	return run, led
}

// realRunSims is realRun with its simulated servers, for tests that
// inject faults.
func realRunSims(t *testing.T, slow bool) (*runner.Run, *ledger.Ledger, *sim.Fleet) {
	t.Helper()
	dir := t.TempDir()
	battery := `
[[tests]]
id = "capital"
category = "reasoning"
user = "Capital of France? One word."
reference = "Paris"
  [[tests.checks]]
  type = "icontains"
  value = "Paris"

[[tests]]
id = "sum"
category = "reasoning"
user = "What is 2 plus 2? Only the number."
reference = "4"
  [[tests.checks]]
  type = "contains"
  value = "4"
`
	rate := "400"
	if slow {
		rate = "5"
	}
	conf := `name = "real"
battery = "battery.toml"
models = ["good", "poor"]
db = ` + "'" + filepath.Join(dir, "ledger.db") + "'" + `
[run]
timeout = "60s"
[sim]
time_scale = 0.01
[[sim.models]]
name = "good"
skill = 0.99
tokens_per_sec = ` + rate + `
[[sim.models]]
name = "poor"
skill = 0.5
tokens_per_sec = ` + rate + `
[[sim.models]]
name = "j1"
judge_error_rate = 0.01
[[sim.models]]
name = "j2"
judge_error_rate = 0.3
[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["good", "poor", "j1", "j2"]
[scoring]
mode = "judge"
[[scoring.judges]]
name = "first"
model = "j1"
server = "gpu0"
[[scoring.judges]]
name = "second"
model = "j2"
server = "gpu0"
`
	for name, body := range map[string]string{"battery.toml": battery, "pitwall.toml": conf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "pitwall.toml"), config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if slow {
		cfg.Sim.TimeScale = 1
	}
	run, led, sims := startOnSim(t, cfg)
	return run, led, sims
}

// startOnSim starts cfg's run on its simulated fleet, with the fleet, the
// ledger and the run closed at the test's end.
func startOnSim(t *testing.T, cfg *config.Config) (*runner.Run, *ledger.Ledger, *sim.Fleet) {
	t.Helper()
	sims, err := sim.StartConfig(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sims.Close() })
	led, err := ledger.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	servers, err := setup.FleetServers(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	fleet := gpu.NewFleet(servers, gpu.Options{})
	t.Cleanup(fleet.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fleet.Discover(ctx)
	run, err := runner.New(cfg, runner.Options{Fleet: fleet, Ledger: led, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	return run, led, sims
}

// judgeRequests counts the judge requests of a run in the ledger.
func judgeRequests(t *testing.T, led *ledger.Ledger, id string) int {
	t.Helper()
	reqs, err := led.Requests(id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeJudge {
			n++
		}
	}
	return n
}

func TestProgramOnARealRunFillsSwitchesJudgeAndRejudges(t *testing.T) {
	t.Parallel()
	run, led := realRun(t, false)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	w := watch(newModel(run.Snapshots(), runCtrl{run}, Options{}, done))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(120, 30))

	// The grid fills and the first judge's verdicts arrive.
	w.waitText(t, "Done", "capital", "sum", "judge first")
	w.waitFor(t, "verdicts", func(s string) bool { return strings.Contains(s, "PASS") || strings.Contains(s, "FAIL") })

	// J and the picker switch to the second judge; the runner judges.
	tm.Type("J")
	w.waitText(t, "Judge in view")
	tm.Type("j")
	tm.Send(keyMsg("enter"))
	w.waitText(t, "judge second")
	w.waitFor(t, "the second judge's verdicts", func(string) bool {
		b := run.Wait(context.Background())
		if b.JudgeInFlight > 0 {
			return false
		}
		for ti := range b.Tests {
			for mi := range b.Models {
				c := b.Cell(ti, mi, 0)
				if c.Status == state.Completed && c.Judgment("second") == nil {
					return false
				}
			}
		}
		return true
	})

	// r re-judges the cell under the cursor: one more judge request.
	before := judgeRequests(t, led, run.ID())
	tm.Type("r")
	tm.Type("y")
	w.waitFor(t, "a re-judge request in the ledger", func(string) bool {
		return judgeRequests(t, led, run.ID()) == before+1 && run.Wait(context.Background()).JudgeInFlight == 0
	})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

func TestProgramStopsARealRun(t *testing.T) {
	t.Parallel()
	run, _ := realRun(t, true)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	w := watch(newModel(run.Snapshots(), runCtrl{run}, Options{}, done))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(120, 30))
	w.waitText(t, "Inference", "capital")
	tm.Type("s")
	w.waitText(t, "Stop the run?")
	tm.Type("y")
	select {
	case <-run.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop")
	}
	w.waitText(t, "Stopped", "⊘") // the final snapshot is drawn: q quits at once
	b := run.Wait(context.Background())
	if b.Status != state.RunStopped || b.Counts.Cancelled == 0 {
		t.Fatalf("run %s with %d cancelled cells, want stopped with some", b.Status, b.Counts.Cancelled)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

func TestProgramRejudgeAsksThenSCancelsAndTheVerdictsComeBack(t *testing.T) {
	t.Parallel()
	run, _, sims := realRunSims(t, false)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	w := watch(newModel(run.Snapshots(), runCtrl{run}, Options{}, done))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(140, 30))
	w.waitText(t, "Done", "judge first")
	before := run.Wait(context.Background())
	if before.Counts.Judged == 0 {
		t.Fatal("no verdicts to keep")
	}

	// R asks, naming the judge calls; n changes nothing.
	tm.Type("R")
	w.waitText(t, "Re-judge "+strconv.Itoa(before.Counts.Completed)+" cells with first?", "judge calls", "[y/N]")
	tm.Type("n")
	w.waitFor(t, "the question gone", func(s string) bool { return !strings.Contains(s, "[y/N]") })
	if b := run.Wait(context.Background()); b.JudgeInFlight != 0 || b.Counts != before.Counts {
		t.Fatalf("n started judge work: %+v", b.Counts)
	}

	// y re-judges; the judge now hangs, so s finds it in flight and cancels.
	sims.Server("gpu0").SetFaults(simspec.Faults{HangRate: 1})
	tm.Type("R")
	w.waitText(t, "[y/N]")
	tm.Type("y")
	w.waitFor(t, "the re-judge in flight", func(string) bool { return run.Wait(context.Background()).JudgeInFlight > 0 })
	w.waitText(t, "s cancels")
	tm.Type("s")
	w.waitFor(t, "the earlier verdicts back", func(string) bool {
		b := run.Wait(context.Background())
		return b.JudgeInFlight == 0 && b.Counts == before.Counts
	})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// On a real run, whose snapshots keep previews, the detail view reads the
// cell whole from the ledger: the judges' reasoning the snapshot dropped
// is on the screen, and no preview note is left.
func TestProgramDetailReadsTheLedgerWhole(t *testing.T) {
	t.Parallel()
	run, led := realRun(t, false)
	b := run.Wait(context.Background())
	c := b.Cell(0, 0, 0)
	if c == nil || !c.Clipped {
		t.Fatalf("cell %+v: want a clipped cell (its judges' replies stay in the ledger)", c)
	}
	whole, err := history.LoadCell(led, run.ID(), state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat})
	if err != nil {
		t.Fatal(err)
	}
	var thought string
	for _, j := range whole.Judgments {
		for _, s := range j.Samples {
			if s.Reasoning != "" || s.Raw != "" {
				thought = strings.TrimSpace(strings.SplitN(s.Reasoning+"\n"+s.Raw, "\n", 2)[0])
			}
		}
	}
	if thought == "" {
		t.Fatal("the ledger holds no judge reasoning or reply to look for")
	}
	thought = string([]rune(thought)[:min(12, len([]rune(thought)))]) // the screen wraps: look for its start
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	var reads atomic.Int32
	opts := Options{Ledger: ledgerFuncs{whole: func(ref state.CellRef) (*state.Cell, error) {
		reads.Add(1)
		return history.LoadCell(led, run.ID(), ref)
	}}}
	w := watch(newModel(run.Snapshots(), runCtrl{run}, opts, done))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(140, 80))
	w.waitText(t, "Done")
	tm.Send(keyMsg("enter"))
	w.waitFor(t, "the cell read whole", func(s string) bool {
		return strings.Contains(s, "Judges") && strings.Contains(s, thought) && !strings.Contains(s, "a preview")
	})
	if n := reads.Load(); n != 1 {
		t.Errorf("the ledger was read %d times, want once", n)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
