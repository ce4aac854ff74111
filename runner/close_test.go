package runner

import (
	"context"
	"pitwall/gpu/simspec"
	"pitwall/runner/state"
	"strings"
	"testing"
	"time"
)

const oneJudge = `
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`

func TestACancelledRejudgeGivesTheVerdictsBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, simFleet+oneJudge), true)
	b := h.finish(t)
	before := b.Counts
	if before.Pass == 0 {
		t.Fatal("no verdicts to keep")
	}
	// The judge now hangs: the re-judge is still in flight at Close.
	h.sims.Server("gpu0").SetFaults(simspec.Faults{HangRate: 1})
	if err := h.run.RejudgeAll(""); err != nil {
		t.Fatal(err)
	}
	h.run.Close()
	after := h.run.Wait(context.Background())
	if after.Counts.Pass != before.Pass || after.Counts.Judged != before.Judged || after.JudgeInFlight != 0 {
		t.Errorf("after a cancelled re-judge: %+v, want the verdicts of before: %+v", after.Counts, before)
	}
	if state.ExitCode(after, false) != state.ExitCode(b, false) {
		t.Errorf("exit code %d after a cancelled re-judge, %d before", state.ExitCode(after, false), state.ExitCode(b, false))
	}
}

func TestNoJudgingIsTakenWhileStoppingOrClosing(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet+oneJudge)
	cfg.Servers[0].Sim = &simspec.Server{Faults: simspec.Faults{HangRate: 1}}
	h := newHarness(t, cfg, true)
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	h.run.Stop()
	if err := h.run.RejudgeAll(""); err == nil {
		select {
		case <-h.run.Done():
		default:
			t.Error("re-judging was taken while the run was stopping")
		}
	}
	h.run.Close()
	if err := h.run.SwitchJudge("j"); err == nil {
		t.Error("switching judges was taken after Close")
	}
}

func TestCloseWithoutStartReturns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, simFleet), true)
	done := make(chan struct{})
	go func() { h.run.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close of a run that never started did not return")
	}
}

func TestAJudgeThatNeverAnswersFailsTheRun(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, `
[run]
timeout = "10s"
retries = 0
[[sim.models]]
name = "good"
skill = 1.0
[[sim.models]]
name = "bad"
skill = 0.01
[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["good", "bad"]
[[servers]]
name = "judgebox"
kind = "sim"
slots = 2
models = ["judge"]
[servers.sim]
faults = { error_rate = 1.0 }
[[scoring.judges]]
name = "j"
model = "judge"
server = "judgebox"
`)
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	if b.Status != state.RunFailed || state.ExitCode(b, false) != state.ExitSetup {
		t.Fatalf("status %s exit %d (%q), want failed and 2 when the judge gave no usable verdict", b.Status, state.ExitCode(b, false), b.Message)
	}
	x := h.export(t)
	if x.Run.Status != "failed" {
		t.Errorf("ledger says %s, want failed", x.Run.Status)
	}
}

func TestReopeningARunAndClosingItLeavesTheLedgerAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, simFleet+oneJudge), true)
	b := h.finish(t)
	h.run.Close()
	before, err := h.led.Run(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Reopen(h.cfg, b.ID, Options{Fleet: h.fleet, Ledger: h.led})
	if err != nil {
		t.Fatal(err)
	}
	s := again.Wait(context.Background())
	if !s.Final || s.Status != state.RunCompleted || s.Counts.Pass != b.Counts.Pass {
		t.Errorf("reopened run: final=%v %s %+v, want the finished run %+v", s.Final, s.Status, s.Counts, b.Counts)
	}
	again.Stop()
	again.Close()
	after, err := h.led.Run(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != before.Status || !after.EndedAt.Equal(before.EndedAt) {
		t.Errorf("closing a reopened run changed its ledger row: %s %v -> %s %v", before.Status, before.EndedAt, after.Status, after.EndedAt)
	}
}

// A reopened run shows the judge it is told to (`show --judge`) and asks
// that judge nothing: no judge request is sent.
func TestAReopenedRunViewsAnotherJudgeWithoutJudging(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, fleetWithJudge2()+twoJudges), true)
	b := h.finish(t)
	h.run.Close()
	reqs := func() int {
		rs, err := h.led.Requests(b.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	before := reqs()
	again, err := Reopen(h.cfg, b.ID, Options{Fleet: h.fleet, Ledger: h.led})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.ViewJudge("k"); err != nil {
		t.Fatal(err)
	}
	if s := again.Latest(); s.Plan.InView != "k" {
		t.Errorf("in view after ViewJudge(k): %q", s.Plan.InView)
	}
	if err := again.ViewJudge("nobody"); err == nil {
		t.Error("ViewJudge of a judge the run does not have: no error")
	}
	again.Stop()
	again.Close()
	if after := reqs(); after != before {
		t.Errorf("viewing a judge sent %d requests", after-before)
	}
}

// A re-judge of every cell asks identical questions more than once (the
// repeats of a model answer alike at temperature 0), and the repeats
// after the first wait on its request without a ledger row of their own.
// Stopped while the judge hangs, the waiting ones end with no row to
// finish: a finish of a row never written made the ledger say "finish
// request 0: not found", and the run turned Failed (exit 2) though
// nothing was lost.
func TestStoppingARejudgeThatSharesRequestsKeepsTheRunAsItWas(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, strings.Replace(simFleet, "retries = 1", "retries = 1\nrepeat = 3", 1)+oneJudge), true)
	b := h.finish(t)
	if b.Status != state.RunCompleted || b.Counts.Judged == 0 {
		t.Fatalf("the run before the re-judge: %s, %+v", b.Status, b.Counts)
	}
	h.sims.Server("gpu0").SetFaults(simspec.Faults{HangRate: 1})
	if err := h.run.RejudgeAll(""); err != nil {
		t.Fatal(err)
	}
	// Let the leading requests reach the hanging judge, then stop.
	timeout := time.After(time.Minute)
	for waiting := true; waiting; {
		select {
		case s := <-h.run.Snapshots():
			waiting = s == nil || s.JudgeInFlight == 0
		case <-timeout:
			t.Fatal("the re-judge sent nothing in a minute")
		}
	}
	h.run.Stop()
	// The run stays open, as the screen keeps it: the ledger's answers to
	// what the stop wrote come back to it.
	snap := func() *state.BatteryRun {
		var sb *state.BatteryRun
		if err := h.run.call(func(e *engine) error { sb = e.snapshot(); return nil }); err != nil {
			t.Fatal(err)
		}
		return sb
	}
	for snap().JudgeInFlight > 0 {
		select {
		case <-timeout:
			t.Fatal("the stopped re-judge did not settle in a minute")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := h.led.Flush(); err != nil {
		t.Fatal(err)
	}
	after := snap()
	h.run.Close()
	if after.Status != b.Status {
		t.Errorf("after a stopped re-judge the run is %s (%q), want %s as before", after.Status, after.Message, b.Status)
	}
	if after.Counts != b.Counts {
		t.Errorf("counts after a stopped re-judge: %+v, want those of before: %+v", after.Counts, b.Counts)
	}
	if got, want := state.ExitCode(after, false), state.ExitCode(b, false); got != want {
		t.Errorf("exit code %d after a stopped re-judge, %d before", got, want)
	}
}
