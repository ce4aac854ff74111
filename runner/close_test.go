package runner

import (
	"context"
	"testing"
	"time"

	"pitwall/gpu/sim"
)

const oneJudge = `
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`

func TestACancelledRejudgeGivesTheVerdictsBack(t *testing.T) {
	h := newHarness(t, testConfig(t, simFleet+oneJudge), true)
	b := h.finish(t)
	before := b.Counts
	if before.Pass == 0 {
		t.Fatal("no verdicts to keep")
	}
	// The judge now hangs: the re-judge is still in flight at Close.
	h.sims.Server("gpu0").SetFaults(sim.Faults{HangRate: 1})
	if err := h.run.RejudgeAll(""); err != nil {
		t.Fatal(err)
	}
	h.run.Close()
	after := h.run.Wait(context.Background())
	if after.Counts.Pass != before.Pass || after.Counts.Judged != before.Judged || after.JudgeInFlight != 0 {
		t.Errorf("after a cancelled re-judge: %+v, want the verdicts of before: %+v", after.Counts, before)
	}
	if ExitCode(after, false) != ExitCode(b, false) {
		t.Errorf("exit code %d after a cancelled re-judge, %d before", ExitCode(after, false), ExitCode(b, false))
	}
}

func TestNoJudgingIsTakenWhileStoppingOrClosing(t *testing.T) {
	cfg := testConfig(t, simFleet+oneJudge)
	cfg.Servers[0].Sim = &sim.ServerSpec{Faults: sim.Faults{HangRate: 1}}
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
	h := newHarness(t, testConfig(t, simFleet), true)
	done := make(chan struct{})
	go func() { h.run.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close of a run that never started did not return")
	}
}
