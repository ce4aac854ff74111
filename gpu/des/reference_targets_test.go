package des

import (
	"pitwall/gpu/placement"
	"testing"
)

// TestReferenceFleetMeetsItsTargets guards the figures BenchmarkReferenceFleet
// reports (deterministic, virtual time): pitwall within 10% of the lower
// bound and faster than both baselines.
func TestReferenceFleetMeetsItsTargets(t *testing.T) {
	sc := referenceScenario(t)
	bound, err := LowerBound(sc)
	if err != nil {
		t.Fatal(err)
	}
	two, err := Simulate(sc, placement.Default, JudgingTwoPhase)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := Simulate(sc, PromptPrix, JudgingTwoPhase)
	if err != nil {
		t.Fatal(err)
	}
	fifo, err := Simulate(sc, FIFO, JudgingPipelined)
	if err != nil {
		t.Fatal(err)
	}
	if x := fifo.Makespan.Seconds() / two.Makespan.Seconds(); x <= 1 {
		t.Errorf("x-fifo %.3f: a FIFO with one global limit is not slower than pitwall", x)
	}
	if x := two.Makespan.Seconds() / bound.Total.Seconds(); x > 1.10 {
		t.Errorf("x-lowerbound %.3f, target ≤ 1.10\n%s", x, two.Summary())
	}
	if x := pp.Makespan.Seconds() / two.Makespan.Seconds(); x <= 1 {
		t.Errorf("x-promptprix %.3f: prompt-prix's policy is not slower than pitwall's", x)
	}
}
