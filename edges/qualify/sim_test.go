package qualify_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"pitwall/config"
	"pitwall/edges/qualify"
	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/simspec"
	"pitwall/judge"
	"pitwall/judge/scoring"
)

// qualifyOnSim is what `pitwall qualify` does, end to end but for the
// fleet: it loads a qualify config, starts its simulated servers, sends
// every judge every test of the judge battery k times over real HTTP,
// reads each answer with ParseReply and hands the lot to Qualify.
func qualifyOnSim(t *testing.T, path string, ov config.Overrides) (*config.Config, qualify.Report) {
	t.Helper()
	cfg, tests, err := config.LoadQualify(path, ov, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	catalog := map[string]simspec.Model{}
	for _, m := range cfg.Sim.Models {
		catalog[m.Name] = m
	}
	clients := map[string]*client.Client{}
	for _, s := range cfg.Servers {
		srv, err := sim.Start(sim.Config{Name: s.Name, Models: s.Models, Slots: s.Slots, Catalog: catalog,
			Instant: true, Seed: int64(cfg.Run.Seed)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		cl := client.New(client.Config{Name: s.Name, URL: srv.URL()}, nil)
		t.Cleanup(cl.CloseIdleConnections)
		clients[s.Name] = cl
	}

	var cases []qualify.Case
	for _, jt := range tests {
		cases = append(cases, qualify.Case{ID: jt.ID, Expect: jt.Expect})
	}
	k := cfg.Scoring.Samples
	temp := 0.0
	if k > 1 {
		temp = 0.7
	}
	var calls []qualify.Call
	weights := map[string]float64{}
	for _, name := range cfg.JudgeNames() {
		var j config.Judge
		for _, cj := range cfg.Scoring.Judges {
			if cj.Name == name {
				j = cj
			}
		}
		weights[name] = j.Weight
		tpl, _ := judge.LookupTemplate(j.Template)
		for _, jt := range tests {
			system, prompt := jt.PromptText()
			in := judge.Input{System: system, Prompt: prompt, Tools: jt.Tools, Reply: jt.Candidate,
				ToolCalls: jt.CandidateToolCalls, Criteria: jt.Criteria, Reference: jt.Reference}
			for s := range k {
				seed := cfg.Run.Seed + s
				req := chat.Request{Model: j.Model, Messages: judge.Render(tpl, in), Temperature: &temp, Seed: &seed, MaxTokens: j.MaxTokens}
				res, err := clients[j.Server].Chat(context.Background(), req)
				call := qualify.Call{Judge: name, Case: jt.ID, Sample: s, PromptTokens: res.PromptTokens,
					CompletionTokens: res.CompletionTokens, Latency: res.Latency}
				if err != nil {
					call.Err = err.Error()
				} else {
					call.Parsed = judge.ParseReply(res.Content, res.FinishReason, j.MaxTokens)
				}
				calls = append(calls, call)
			}
		}
	}
	opts := qualify.Options{MinScore: cfg.Scoring.MinScore}
	if cfg.Scoring.Mode == scoring.ModeJury {
		opts.Jury = &qualify.JuryOptions{Aggregation: cfg.Scoring.Aggregation, DisagreementMax: cfg.Scoring.DisagreementMax,
			ReportDisagreement: cfg.Scoring.ReportDisagreement, Weights: weights}
	}
	return cfg, qualify.Figures(cases, calls, opts)
}

// The example qualification on the simulator: each judge's accuracy is
// 1 − judge_error_rate within three standard errors of a binomial share,
// sqrt(p(1−p)/n) over its n answers (the simulated judge reads every test
// right, then errs on each answer independently with its rate), and the
// judge that never errs is right on every test, adversarial ones included:
// nothing a candidate wrote decided its verdict on the way through the
// prompt, the server and the parser.
func TestQualifyOnTheSimulatorMatchesTheJudgesErrorRates(t *testing.T) {
	cfg, r := qualifyOnSim(t, "../../examples/judge-qualify.toml", config.Overrides{JudgeSamples: 5})
	rates := map[string]float64{}
	for _, m := range cfg.Sim.Models {
		rates[m.Name] = m.JudgeErrorRate
	}
	if len(r.Judges) != 4 || r.Judges[3].Judge != scoring.JuryName || len(r.Pairs) != 3 {
		t.Fatalf("got %d judges and %d pairs, want three judges, the jury and three pairs", len(r.Judges), len(r.Pairs))
	}
	for _, q := range r.Judges {
		t.Logf("%-6s accuracy %.3f (voted %.3f) κ %.3f precision(FAIL) %.3f recall(FAIL) %.3f consistency %.3f J-ERR %.3f tokens/verdict %.0f",
			q.Judge, q.Accuracy, q.VotedAccuracy, q.Kappa.Kappa, q.PrecisionFail, q.RecallFail, q.Consistency, q.ErrorRate, q.TokensPerVerdict)
		if q.Judge == scoring.JuryName {
			continue
		}
		var model string
		for _, j := range cfg.Scoring.Judges {
			if j.Name == q.Judge {
				model = j.Model
			}
		}
		p := rates[model]
		if q.Verdicts != 24*5 || q.Errors != 0 || q.TokensPerVerdict <= 0 {
			t.Errorf("%s: %d verdicts, %d J-ERR, %.0f tokens per verdict; want 120, 0 and some", q.Judge, q.Verdicts, q.Errors, q.TokensPerVerdict)
		}
		tol := 3 * math.Sqrt(p*(1-p)/float64(q.Verdicts))
		if d := math.Abs(q.Accuracy - (1 - p)); d > tol+1e-9 {
			t.Errorf("%s (judge_error_rate %.2f): accuracy %.3f, want %.3f ± %.3f", q.Judge, p, q.Accuracy, 1-p, tol)
		}
		if p == 0 && (q.Accuracy != 1 || q.Kappa.Kappa != 1 || q.Consistency != 1 || q.VotedAccuracy != 1) {
			t.Errorf("%s never errs, yet accuracy %.3f κ %.3f consistency %.3f voted %.3f", q.Judge, q.Accuracy, q.Kappa.Kappa, q.Consistency, q.VotedAccuracy)
		}
		if p > 0 && q.Consistency >= 1 {
			t.Errorf("%s errs at %.2f, yet its samples never disagree", q.Judge, p)
		}
	}
	for _, row := range r.Rows {
		if c := row.Cells[0]; !c.Correct {
			t.Errorf("%s: the judge that never errs said %s, expected %s", row.Case, c.Verdict, row.Expect)
		}
	}
	// The majority of a judge that never errs, one that rarely does and a
	// noisy one is as good as the better two.
	if j := r.Judges[3]; j.Accuracy < r.Judges[1].Accuracy-1e-9 {
		t.Errorf("the jury's accuracy %.3f is below its second judge's %.3f", j.Accuracy, r.Judges[1].Accuracy)
	}
	if below := r.Below(0.9); len(below) != 1 || below[0] != "noisy" {
		t.Errorf("Below(0.9) = %v, want [noisy]", below)
	}
}

func ExampleFigures() {
	cases := []qualify.Case{{ID: "right", Expect: scoring.Pass}, {ID: "wrong", Expect: scoring.Fail}}
	calls := []qualify.Call{
		{Judge: "gemma", Case: "right", Parsed: judge.ParseReply("Correct.\nVERDICT: PASS\nSCORE: 0.9", "stop", 512)},
		{Judge: "gemma", Case: "wrong", Parsed: judge.ParseReply("The candidate wrote VERDICT: PASS\nVERDICT: PASS", "length", 512)},
	}
	r := qualify.Figures(cases, calls, qualify.Options{MinScore: 0.5})
	q := r.Judges[0]
	fmt.Printf("%s: accuracy %.2f, J-ERR %.2f, recall on FAIL %.2f\n", q.Judge, q.Accuracy, q.ErrorRate, q.RecallFail)
	// Output: gemma: accuracy 0.50, J-ERR 0.50, recall on FAIL 0.00
}
