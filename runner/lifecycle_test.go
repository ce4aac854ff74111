package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/simspec"
	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// twoServers puts the tested models on gpu0 and two judges on gpu1, so a
// test can make either hang alone.
const twoServers = `
[run]
timeout = "30s"
retries = 0

[[sim.models]]
name = "good"
skill = 1.0
[[sim.models]]
name = "bad"
skill = 0.01
[[sim.models]]
name = "judge"
judge_error_rate = 0.0
[[sim.models]]
name = "judge2"
judge_error_rate = 0.0

[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["good", "bad"]

[[servers]]
name = "gpu1"
kind = "sim"
slots = 4
models = ["judge", "judge2"]

[scoring]
mode = "judge"
active = "j"
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu1"
[[scoring.judges]]
name = "k"
model = "judge2"
server = "gpu1"
`

// watch reads snapshots until until holds, checking on the way that they
// never go backwards and that none is Final before the end.
type watch struct {
	t     *testing.T
	run   *Run
	seq   uint64
	final bool
}

func (w *watch) until(what string, until func(*state.BatteryRun) bool) *state.BatteryRun {
	w.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case b, ok := <-w.run.Snapshots():
			if !ok {
				w.t.Fatalf("snapshots closed while waiting for %s", what)
			}
			if b.Seq <= w.seq {
				w.t.Fatalf("snapshot %d after %d", b.Seq, w.seq)
			}
			if w.final && !b.Final {
				w.t.Fatalf("snapshot %d is not Final after a Final one", b.Seq)
			}
			w.seq, w.final = b.Seq, b.Final
			if until(b) {
				return b
			}
		case <-deadline:
			w.t.Fatalf("no snapshot showed %s", what)
		}
	}
}

func allTerminal(b *state.BatteryRun) bool {
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if !c.Status.Terminal() {
				return false
			}
		}
	}
	return true
}

// judgmentsInFlight counts the judgments queued or running in a snapshot.
func judgmentsInFlight(b *state.BatteryRun) int {
	n := 0
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			for _, j := range c.Judgments {
				if j.Status != state.JudgmentDone {
					n++
				}
			}
		}
	}
	return n
}

func TestLifecycleStopMidInference(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, twoServers)
	h := newHarness(t, cfg, true)
	h.sims.Server("gpu0").SetFaults(simspec.Faults{HangRate: 1})
	w := &watch{t: t, run: h.run}
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	b := w.until("cells running", func(b *state.BatteryRun) bool { return b.Counts.Running > 0 })
	if b.Phase != state.PhaseInference || b.Status != state.RunRunning || b.Final {
		t.Fatalf("mid-inference: phase %s status %s final %v", b.Phase, b.Status, b.Final)
	}
	h.run.Stop()
	b = w.until("the end", func(b *state.BatteryRun) bool { return b.Final })
	if b.Status != state.RunStopped || b.Phase != state.PhaseDone || b.Message != "stopped" {
		t.Errorf("after stop: status %s phase %s message %q", b.Status, b.Phase, b.Message)
	}
	if b.Counts.Cancelled != b.Counts.Cells() || !allTerminal(b) {
		t.Errorf("after stop: %+v, want every cell cancelled", b.Counts)
	}
	if got := state.ExitCode(b, false); got != state.ExitFail {
		t.Errorf("exit code %d after a stop, want %d", got, state.ExitFail)
	}
	if err := h.run.RejudgeAll(""); err != nil {
		t.Errorf("re-judging a stopped run with no completed cell: %v", err)
	}
}

func TestLifecycleStopMidJudging(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, twoServers)
	h := newHarness(t, cfg, true)
	h.sims.Server("gpu1").SetFaults(simspec.Faults{HangRate: 1})
	w := &watch{t: t, run: h.run}
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	b := w.until("judging in flight", func(b *state.BatteryRun) bool {
		return b.Phase == state.PhaseJudgment && b.JudgeInFlight > 0
	})
	if b.Final || b.Counts.Done() != b.Counts.Cells() {
		t.Fatalf("phase 2 began before phase 1 ended: %+v", b.Counts)
	}
	completed := b.Counts.Completed
	h.run.Stop()
	b = w.until("the end", func(b *state.BatteryRun) bool { return b.Final })
	if b.Status != state.RunStopped || b.JudgeInFlight != 0 {
		t.Errorf("after stop mid-judging: status %s, %d judge jobs in flight", b.Status, b.JudgeInFlight)
	}
	if b.Counts.Completed != completed || b.Counts.Judged != 0 {
		t.Errorf("after stop mid-judging: %+v; want the %d completed cells kept and no verdict", b.Counts, completed)
	}
	if n := judgmentsInFlight(b); n != 0 {
		t.Errorf("%d judgments still queued or running after the end", n)
	}
}

func TestLifecycleRejudgeSwitchAndClose(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, twoServers)
	h := newHarness(t, cfg, true)
	w := &watch{t: t, run: h.run}
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	b := w.until("the end", func(b *state.BatteryRun) bool { return b.Final })
	if b.Status != state.RunCompleted || b.Plan.InView != "j" || b.Counts.Judged != b.Counts.ToJudge || b.Counts.ToJudge == 0 {
		t.Fatalf("completed run: status %s in view %q counts %+v", b.Status, b.Plan.InView, b.Counts)
	}
	if b.Cell(0, 0, 0).Judgment("k") != nil {
		t.Fatal("judge k judged though only j is in view")
	}
	before := b.Counts

	// Re-judge: judge work in flight after the end, then the same counts.
	h.sims.Server("gpu1").SetFaults(simspec.Faults{HangRate: 1})
	if err := h.run.RejudgeAll(""); err != nil {
		t.Fatal(err)
	}
	b = w.until("a re-judge in flight", func(b *state.BatteryRun) bool { return b.JudgeInFlight > 0 })
	if !b.Final || b.Status != state.RunCompleted {
		t.Errorf("a re-judge changed the run's end: final %v status %s", b.Final, b.Status)
	}
	h.run.Stop() // cancels the re-judge: the earlier verdicts come back
	b = w.until("the re-judge cancelled", func(b *state.BatteryRun) bool { return b.JudgeInFlight == 0 })
	if b.Counts != before {
		t.Errorf("after a cancelled re-judge: %+v, want %+v", b.Counts, before)
	}
	h.sims.Server("gpu1").SetFaults(simspec.Faults{})
	if err := h.run.RejudgeAll(""); err != nil {
		t.Fatal(err)
	}
	b = w.until("the re-judge done", func(b *state.BatteryRun) bool {
		return b.JudgeInFlight == 0 && b.Counts.Judged == b.Counts.ToJudge && judgmentsInFlight(b) == 0
	})
	if b.Counts.Completed != before.Completed {
		t.Errorf("a re-judge changed inference: %+v, before %+v", b.Counts, before)
	}

	// Switch judge: k judges what it has not judged, j's verdicts stay.
	if err := h.run.SwitchJudge("k"); err != nil {
		t.Fatal(err)
	}
	b = w.until("k's verdicts", func(b *state.BatteryRun) bool {
		return b.Plan.InView == "k" && b.JudgeInFlight == 0 && b.Counts.Judged == b.Counts.ToJudge
	})
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if c.Status == state.Completed && (c.Judgment("j") == nil || c.Judgment("k") == nil) {
				t.Errorf("cell %s × %s lacks a verdict of j or k after the switch", c.Model, c.Test)
			}
		}
	}
	if err := h.run.SwitchJudge(scoring.JuryName); err != nil {
		t.Fatal(err)
	}
	w.until("the jury in view", func(b *state.BatteryRun) bool {
		return b.Plan.InView == scoring.JuryName && b.JudgeInFlight == 0 && b.Counts.Judged == b.Counts.ToJudge
	})

	// Close: the channel closes, and nothing more is taken.
	h.run.Close()
	for range h.run.Snapshots() {
	}
	if err := h.run.SwitchJudge("j"); err == nil {
		t.Error("switching judges was taken after Close")
	}
	if err := h.run.RejudgeAll(""); err == nil {
		t.Error("a re-judge was taken after Close")
	}
	x, err := history.BuildExport(h.led, h.run.ID(), "")
	if err != nil {
		t.Fatal(err)
	}
	if x.Run.Status != "completed" || x.Judge != "j" {
		t.Errorf("the ledger says %s with judge %q in view; want completed and j (the run's own)", x.Run.Status, x.Judge)
	}
}

func TestLifecycleTransitions(t *testing.T) {
	t.Parallel()
	all := []lifecycle{idle, inferring, judging, stopping, ended, closing, closed}
	allowed := map[[2]lifecycle]bool{}
	for from, tos := range next {
		for _, to := range tos {
			allowed[[2]lifecycle{from, to}] = true
		}
	}
	for _, from := range all {
		for _, to := range all {
			e := &engine{life: from}
			moved := func() (ok bool) {
				defer func() { ok = recover() == nil }()
				e.move(to)
				return
			}()
			if moved != allowed[[2]lifecycle{from, to}] {
				t.Errorf("%s → %s: moved %v, the table allows %v", from, to, moved, allowed[[2]lifecycle{from, to}])
			}
		}
	}
	// Every lifecycle but closed can reach closed: nothing is stuck.
	for _, from := range all[:len(all)-1] {
		seen := map[lifecycle]bool{from: true}
		frontier := []lifecycle{from}
		for len(frontier) > 0 {
			l := frontier[0]
			frontier = frontier[1:]
			for _, to := range next[l] {
				if !seen[to] {
					seen[to] = true
					frontier = append(frontier, to)
				}
			}
		}
		if !seen[closed] {
			t.Errorf("%s cannot reach closed", from)
		}
	}
}

// slowLoads is a fleet whose only server loads each model for seconds of
// simulated time (tens of milliseconds at the test's time scale).
const slowLoads = `
[run]
timeout = "30s"
[sim]
time_scale = 0.02
[[sim.models]]
name = "good"
skill = 1.0
size_gb = 20
[[sim.models]]
name = "bad"
skill = 0.01
size_gb = 20
[[servers]]
name = "gpu0"
kind = "sim"
slots = 2
models = ["good", "bad"]
  [servers.sim]
  backend = "ollama"
  load_gbps = 2
  gpus = [{ vram_gb = 24 }]
`

func TestLoadingShowsWhileTheModelLoads(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, slowLoads)
	h := newHarness(t, cfg, false)
	w := &watch{t: t, run: h.run}
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	b := w.until("a cell loading its model", func(b *state.BatteryRun) bool { return b.Counts.Loading > 0 })
	loading := 0
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if c.Status == state.Loading {
				loading++
				if c.Server != "gpu0" {
					t.Errorf("a loading cell names server %q", c.Server)
				}
			}
		}
	}
	if loading != b.Counts.Loading || state.TallyRows(b.Rows, b.Plan.InView) != b.Counts {
		t.Errorf("the snapshot's counts %+v disagree with its rows (%d loading)", b.Counts, loading)
	}
	if b.Counts.Cells() != len(b.Tests)*len(b.Models) {
		t.Errorf("counts cover %d cells, the grid %d", b.Counts.Cells(), len(b.Tests)*len(b.Models))
	}
	b = w.until("the end", func(b *state.BatteryRun) bool { return b.Final })
	x := h.export(t)
	got := map[string]int{}
	for _, c := range x.Cells {
		got[c.Status]++
	}
	want := map[string]int{"completed": b.Counts.Completed, "failed": b.Counts.Failed, "error": b.Counts.Errored, "cancelled": b.Counts.Cancelled}
	for k, v := range want {
		if got[k] != v || x.Summary.ByStatus[k] != v {
			t.Errorf("export has %d (summary %d) %s cells, the snapshot %d", got[k], x.Summary.ByStatus[k], k, v)
		}
	}
}

func TestALedgerThatFailsMidRunEndsTheRunFailed(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, slowLoads)
	h := newHarness(t, cfg, false)
	w := &watch{t: t, run: h.run}
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	w.until("a cell done", func(b *state.BatteryRun) bool { return b.Counts.Done() > 0 })
	// The ledger's file becomes read-only under the run and its handle
	// closes: every write from here fails.
	if err := os.Chmod(h.cfg.DB, 0o444); err != nil {
		t.Fatal(err)
	}
	h.led.Close()
	b := w.until("the end", func(b *state.BatteryRun) bool { return b.Final })
	if b.Status != state.RunFailed || !strings.Contains(b.Message, h.cfg.DB) || !strings.Contains(b.Message, "ledger") {
		t.Fatalf("status %s, message %q; want failed, naming the ledger %s", b.Status, b.Message, h.cfg.DB)
	}
	if got := state.ExitCode(b, false); got != state.ExitSetup {
		t.Errorf("exit code %d, want %d", got, state.ExitSetup)
	}
	if !allTerminal(b) {
		t.Errorf("cells left running after the ledger failed: %+v", b.Counts)
	}
	// What was written before stays readable.
	if err := os.Chmod(h.cfg.DB, 0o644); err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(h.cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	cells, err := led.Cells(h.run.ID())
	if err != nil || len(cells) != len(b.Tests)*len(b.Models) {
		t.Fatalf("reading the ledger back: %d cells, %v", len(cells), err)
	}
	done := 0
	for _, c := range cells {
		if c.Status == string(state.Completed) || c.Status == string(state.Failed) {
			done++
		}
	}
	if done == 0 {
		t.Error("no finished cell was readable after the ledger failed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if h.run.Wait(ctx) == nil {
		t.Error("Wait returned no snapshot")
	}
}
