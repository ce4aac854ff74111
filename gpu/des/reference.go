package des

import (
	"pitwall/gpu/chat"
	"pitwall/gpu/internal/refgen"
)

// Reference is the reference fleet of BenchmarkReferenceFleet and
// examples/reference-fleet.toml (4 simulated 24 GB GPUs, 12 models, 200
// tests, a jury of two) as a Scenario: every cell test by test across the
// models, then each cell's judge jobs. rate is the servers' batching
// (sim.StreamRate for the simulator's).
//
// With pinJudges, each judge's jobs are pinned to the server its
// [[scoring.judges]] entry names, as the runner pins them; without, any
// server may run them. A caller comparing a real run with the simulation
// sets the Scenario's Hide fields to what its live fleet cannot see.
func Reference(rate RateFunc, pinJudges bool) Scenario {
	f := refgen.Reference()
	sc := Scenario{Models: map[string]Model{}, Rate: rate}
	for _, m := range f.Models() {
		sc.Models[m.Name] = Model{SizeGB: m.SizeGB, TokensPerSec: m.TokensPerSec, PrefillTPS: m.PrefillTPS, TTFT: m.TTFT}
	}
	for _, name := range f.Servers {
		sc.Servers = append(sc.Servers, Server{Name: name, Slots: f.Slots, VRAMGB: f.VRAMGB, LoadGBps: f.LoadGBps})
	}
	for _, t := range f.Tests {
		for _, m := range f.Candidates {
			sc.Jobs = append(sc.Jobs, Job{Model: m.Name, Purpose: chat.PurposeInference,
				PromptTokens: refgen.PromptTokens(t), ReplyTokens: refgen.ReplyTokens(m, t)})
		}
	}
	cells := len(sc.Jobs)
	for cell := range cells {
		t := f.Tests[cell/len(f.Candidates)]
		m := f.Candidates[cell%len(f.Candidates)]
		for i, j := range f.Judges {
			job := Job{Model: j.Name, Purpose: chat.PurposeJudge, Judges: cell,
				PromptTokens: refgen.JudgePromptTokens(m, t), ReplyTokens: refgen.JudgeReplyTokens(t)}
			if pinJudges {
				job.Pinned = f.JudgeServer(i)
			}
			sc.Jobs = append(sc.Jobs, job)
		}
	}
	return sc
}
