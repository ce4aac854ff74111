package runner

import (
	"context"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

const twoJudges = `
[[sim.models]]
name = "judge2"
judge_error_rate = 0.0

[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"

[[scoring.judges]]
name = "k"
model = "judge2"
server = "gpu0"
`

func fleetWithJudge2() string {
	return simFleet[:len(simFleet)-len("models = [\"good\", \"bad\", \"judge\"]\n")] + "models = [\"good\", \"bad\", \"judge\", \"judge2\"]\n"
}

func TestJuryAggregatesEveryJudge(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, fleetWithJudge2()+twoJudges)
	if cfg.Scoring.Mode != "jury" {
		t.Fatalf("two judges should make a jury by default, got %q", cfg.Scoring.Mode)
	}
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	if b.Plan.InView != scoring.JuryName {
		t.Fatalf("active judge %q, want the jury", b.Plan.InView)
	}
	for ti := range b.Tests {
		for mi := range b.Models {
			c := b.Cell(ti, mi, 0)
			if c.Status != state.Completed {
				continue
			}
			for _, name := range []string{"j", "k", scoring.JuryName} {
				if j := c.Judgment(name); j == nil || j.Status != state.JudgmentDone {
					t.Errorf("%s × %s: no %s judgment", c.Model, c.Test, name)
				}
			}
			if jj := c.Judgment(scoring.JuryName); jj != nil && (jj.Jury == nil || len(jj.Jury.Judges) != 2) {
				t.Errorf("%s × %s: jury result %+v, want two judges", c.Model, c.Test, jj.Jury)
			}
		}
	}
	if b.Counts.Judged != b.Counts.Completed {
		t.Errorf("judged %d of %d completed cells", b.Counts.Judged, b.Counts.Completed)
	}
}

func TestSwitchJudgeJudgesOnlyWhatIsMissingAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, fleetWithJudge2()+twoJudges+"\n[scoring]\nmode = \"judge\"\n")
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	if b.Plan.InView != "j" {
		t.Fatalf("active judge %q, want j", b.Plan.InView)
	}
	before := judgeRequests(t, h)
	if err := h.run.SwitchJudge("k"); err != nil {
		t.Fatal(err)
	}
	b = waitJudged(t, h.run, "k")
	if b.Plan.InView != "k" || b.Counts.Judged != b.Counts.Completed {
		t.Fatalf("after switching: active %q, judged %d of %d", b.Plan.InView, b.Counts.Judged, b.Counts.Completed)
	}
	after := judgeRequests(t, h)
	if after["k"] != b.Counts.Completed || after["j"] != before["j"] {
		t.Errorf("judge requests before %v after %v: want k to judge each of %d cells once and j nothing more", before, after, b.Counts.Completed)
	}
	// j's verdicts are kept, not replaced by k's.
	for ti := range b.Tests {
		for mi := range b.Models {
			if c := b.Cell(ti, mi, 0); c.Status == state.Completed && c.Judgment("j") == nil {
				t.Errorf("%s × %s lost j's verdict", c.Model, c.Test)
			}
		}
	}
	if err := h.run.SwitchJudge("nobody"); err == nil {
		t.Error("switching to an unknown judge should fail")
	}
}

func TestRejudgeSendsNoInferenceAndReplacesTheVerdict(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, ledgerOn func(*config.Config)) {
		cfg := testConfig(t, simFleet+`
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`)
		ledgerOn(cfg)
		h := newHarness(t, cfg, true)
		b := h.finish(t)
		var ref state.CellRef
		for ti := range b.Tests {
			if c := b.Cell(ti, 0, 0); c.Status == state.Completed {
				ref = state.CellRef{Test: c.Test, Model: c.Model}
				break
			}
		}
		if ref.Test == "" {
			t.Fatal("no completed cell to re-judge")
		}
		reqsBefore := countPurpose(t, h)
		if err := h.run.Rejudge([]state.CellRef{ref}, ""); err != nil {
			t.Fatal(err)
		}
		waitJudged(t, h.run, "")
		reqsAfter := countPurpose(t, h)
		if reqsAfter[ledger.PurposeInference] != reqsBefore[ledger.PurposeInference] {
			t.Errorf("re-judging sent inference: %v -> %v", reqsBefore, reqsAfter)
		}
		if reqsAfter[ledger.PurposeJudge] != reqsBefore[ledger.PurposeJudge]+1 {
			t.Errorf("re-judging one cell with one sample: judge requests %d -> %d", reqsBefore[ledger.PurposeJudge], reqsAfter[ledger.PurposeJudge])
		}
	})
}

func TestSecondRunTakesVerdictsFromTheCache(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, ledgerOn func(*config.Config)) {
		cfg := testConfig(t, simFleet+`
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`)
		ledgerOn(cfg)
		first := newHarness(t, cfg, true)
		first.finish(t)
		first.led.Close()

		again := *cfg
		again.Servers = append([]config.Server(nil), cfg.Servers...)
		again.Servers[0].URL = "" // a new simulated server, on a new port
		second := newHarness(t, &again, true)
		b := second.finish(t)
		x := second.export(t)
		live := 0
		for _, q := range x.Requests {
			if q.Purpose == ledger.PurposeJudge && q.Server != "(cache)" {
				live++
			}
		}
		if live != 0 {
			t.Errorf("%d judge requests sent again for verdicts already in the ledger", live)
		}
		if b.Counts.Judged != b.Counts.Completed || b.Counts.Pass != b.Counts.Completed {
			t.Errorf("cached verdicts: %+v", b.Counts)
		}
	})
}

func TestPipelinedJudgingJudgesEveryCompletedCell(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet+`
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`)
	cfg.Run.Judging = "pipelined"
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	if b.Counts.Judged != b.Counts.Completed || b.Counts.Completed == 0 {
		t.Fatalf("pipelined: judged %d of %d", b.Counts.Judged, b.Counts.Completed)
	}
	if n := countPurpose(t, h)[ledger.PurposeJudge]; n != b.Counts.Completed {
		t.Errorf("%d judge requests for %d completed cells", n, b.Counts.Completed)
	}
}

func waitJudged(t *testing.T, r *Run, active string) *state.BatteryRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		select {
		case s := <-r.Snapshots():
			if s.JudgeInFlight == 0 && s.Counts.Judged == s.Counts.ToJudge && (active == "" || s.Plan.InView == active) {
				return s
			}
		case <-ctx.Done():
			t.Fatal("judging did not finish")
		}
	}
}

func judgeRequests(t *testing.T, h *harness) map[string]int {
	t.Helper()
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeJudge {
			out[q.Judge]++
		}
	}
	return out
}

func countPurpose(t *testing.T, h *harness) map[string]int {
	t.Helper()
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, q := range reqs {
		out[q.Purpose]++
	}
	return out
}
