package des

import (
	"testing"
	"time"

	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
)

// The judge model loads while inference's last jobs run, not after them,
// and with no more loads than the run needs: one per model.
func TestJudgeModelLoadsAsInferenceEnds(t *testing.T) {
	sc := Scenario{Rate: sim.StreamRate,
		Servers: []Server{{Name: "gpu0", Slots: 2, VRAMGB: 24, LoadGBps: 0.5}},
		Models: map[string]Model{
			"a": {SizeGB: 12, TokensPerSec: 60, TTFT: 100 * time.Millisecond},
			"j": {SizeGB: 8, TokensPerSec: 90, TTFT: 100 * time.Millisecond},
		}}
	for range 40 {
		sc.Jobs = append(sc.Jobs, Job{Model: "a", Purpose: chat.PurposeInference, PromptTokens: 50, ReplyTokens: 200})
	}
	for i := range 40 {
		sc.Jobs = append(sc.Jobs, Job{Model: "j", Purpose: chat.PurposeJudge, PromptTokens: 300, ReplyTokens: 60, Judges: i})
	}
	for _, judging := range []string{JudgingTwoPhase, JudgingPipelined} {
		res, err := Simulate(sc, placement.Default, judging)
		if err != nil {
			t.Fatal(err)
		}
		if res.Loads != 2 {
			t.Errorf("%s: %d loads, want 2 (a, then j once)", judging, res.Loads)
		}
		loads := res.Servers[0].Loads
		if len(loads) != 2 || loads[1].Model != "j" || loads[1].End > res.InferenceEnd {
			t.Errorf("%s: loads %+v, inference ends %s: want j loaded before inference ends", judging, loads, res.InferenceEnd)
		}
	}
}

// On the reference fleet no server loads a judge model twice: a judge
// model loaded ahead of its jobs is never evicted before the judging
// needs it.
func TestReferenceFleetLoadsEachJudgeModelOncePerServer(t *testing.T) {
	sc := Reference(sim.StreamRate, false)
	for _, judging := range []string{JudgingTwoPhase, JudgingPipelined} {
		res, err := Simulate(sc, placement.Default, judging)
		if err != nil {
			t.Fatal(err)
		}
		judges := map[string]bool{}
		for _, j := range sc.Jobs {
			if j.Purpose == chat.PurposeJudge {
				judges[j.Model] = true
			}
		}
		for _, s := range res.Servers {
			seen := map[string]bool{}
			for _, l := range s.Loads {
				if judges[l.Model] && seen[l.Model] {
					t.Errorf("%s: %s loads %s twice: %+v", judging, s.Name, l.Model, s.Loads)
				}
				seen[l.Model] = true
			}
		}
	}
}
