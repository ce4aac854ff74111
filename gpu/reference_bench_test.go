package gpu

import (
	"testing"

	"pitwall/gpu/internal/refgen"
	"pitwall/gpu/sim"
)

// referenceScenario is the reference fleet (gpu/internal/refgen) as a
// simulation scenario: every cell of the battery, test by test across the
// models (battery order), then each cell's judge job per jury member.
func referenceScenario(tb testing.TB) Scenario {
	tb.Helper()
	f := refgen.Reference()
	sc := Scenario{Models: map[string]SimModel{}, Rate: sim.StreamRate}
	for _, m := range f.Models() {
		sc.Models[m.Name] = SimModel{SizeGB: m.SizeGB, TokensPerSec: m.TokensPerSec, PrefillTPS: m.PrefillTPS, TTFT: m.TTFT}
	}
	for _, name := range f.Servers {
		sc.Servers = append(sc.Servers, SimServer{Name: name, Slots: f.Slots, VRAMGB: f.VRAMGB, LoadGBps: f.LoadGBps})
	}
	for _, t := range f.Tests {
		for _, m := range f.Candidates {
			sc.Jobs = append(sc.Jobs, SimJob{Model: m.Name, Purpose: PurposeInference,
				PromptTokens: refgen.PromptTokens(t), ReplyTokens: refgen.ReplyTokens(m, t)})
		}
	}
	cells := len(sc.Jobs)
	for cell := range cells {
		t := f.Tests[cell/len(f.Candidates)]
		m := f.Candidates[cell%len(f.Candidates)]
		for _, j := range f.Judges {
			sc.Jobs = append(sc.Jobs, SimJob{Model: j.Name, Purpose: PurposeJudge, Judges: cell,
				PromptTokens: refgen.JudgePromptTokens(m, t), ReplyTokens: refgen.JudgeReplyTokens(t)})
		}
	}
	return sc
}

// BenchmarkReferenceFleet runs the reference fleet in virtual time under
// pitwall's Placement and the two baselines, and reports:
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
	var two, piped, pp, ff DESResult
	for b.Loop() {
		for _, run := range []struct {
			out     *DESResult
			p       Policy
			judging string
		}{
			{&two, Placement, JudgingTwoPhase},
			{&piped, Placement, JudgingPipelined},
			{&pp, PromptPrix, JudgingTwoPhase},
			{&ff, FIFO, JudgingPipelined},
		} {
			if *run.out, err = SimulateScenario(sc, run.p, run.judging); err != nil {
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
