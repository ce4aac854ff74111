package history

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/runner/ledger"
)

func TestSpendingSplitsJudgingFromInferenceAndPaysOnlyLiveRequests(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	req := func(purpose, server, model, judge string, from, to, in, out int) ledger.Request {
		return ledger.Request{RunID: "r", Status: ledger.StatusCompleted, Purpose: purpose, Server: server, Model: model, Judge: judge, Test: "t",
			StartedAt: at(from), EndedAt: at(to), Latency: time.Duration(to-from) * time.Millisecond,
			PromptTokens: in, CompletionTokens: out}
	}
	inf, jdg := ledger.PurposeInference, ledger.PurposeJudge
	reqs := []ledger.Request{
		// Two requests side by side, then one after a gap: wall 0-1500 and
		// 2000-2500, GPU 1000+1000+500.
		req(inf, "gpu0", "m1", "", 0, 1000, 100, 10),
		req(inf, "gpu1", "m2", "", 500, 1500, 200, 20),
		// Inside m1's first: adds to m2's wall, not to inference's.
		req(inf, "gpu1", "m2", "", 100, 400, 10, 1),
		req(inf, "gpu0", "m1", "", 2000, 2500, 300, 30),
		// Reused from the ledger: carries the old tokens, paid for nothing.
		req(inf, ledger.ServerCache, "m2", "", 2500, 2500, 999, 999),
		req(ledger.PurposeWarmup, "gpu0", "m1", "", 0, 100, 5, 5),
		req(jdg, "gpu0", "judge-a", "a", 3000, 3400, 1000, 50),
		req(jdg, ledger.ServerShared, "judge-a", "a", 3400, 3400, 0, 0),
		req(jdg, ledger.ServerCache, "judge-a", "a", 3000, 3000, 0, 0),
		req(jdg, "https://api.example", "judge-b", "b", 3000, 3600, 2000, 100),
		{RunID: "r", Purpose: jdg, Model: "judge-b", Judge: "b", Status: ledger.StatusCanceled}, // never dispatched
		// Another run's: counts for none of these.
		{RunID: "other", Purpose: inf, Server: "gpu0", Model: "m1", Status: ledger.StatusCompleted,
			EndedAt: at(9000), Latency: time.Second, PromptTokens: 7, CompletionTokens: 7},
	}
	led, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	for i := range reqs {
		if _, err := led.InsertRequest(&reqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	usage, err := led.RunUsage("r")
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := json.Marshal(config.Scoring{Judges: []config.Judge{
		{Name: "b", Model: "judge-b", PriceIn: 2.5, PriceOut: 10},
		{Name: "a", Model: "judge-a"}, // priced by [prices] of its model
	}})
	cfg, _ := json.Marshal(map[string]any{"prices": map[string]config.Price{"judge-a": {In: 1, Out: 2}, "m1": {In: 0.5, Out: 1}}})
	run := ledger.RunRow{ID: "r", Models: []string{"m1", "m2"}, ScoringJSON: string(sc), ConfigJSON: string(cfg)}

	s := spending(run, usage)

	costOf := func(c *float64) float64 {
		if c == nil {
			return -1
		}
		return *c
	}
	tests := []struct {
		name                         string
		got                          Spend
		requests, live, cached, shar int
		in, out                      int
		wallMS, gpuMS                int64
		cost                         float64 // -1: unpriced
		unpriced                     []string
	}{
		{"inference", s.Inference.Spend, 5, 4, 1, 0, 610, 61, 2000, 2800, (400*0.5 + 40*1) / 1e6, []string{"m2"}},
		{"inference of m1", s.Inference.Models[0].Spend, 2, 2, 0, 0, 400, 40, 1500, 1500, (400*0.5 + 40*1) / 1e6, nil},
		{"inference of m2", s.Inference.Models[1].Spend, 3, 2, 1, 0, 210, 21, 1300, 1300, -1, nil},
		{"judging", s.Judging.Spend, 5, 2, 1, 1, 3000, 150, 600, 1000, (1000*1+50*2)/1e6 + (2000*2.5+100*10)/1e6, nil},
		{"judge b first, as configured", s.Judging.Judges[0].Spend, 2, 1, 0, 0, 2000, 100, 600, 600, (2000*2.5 + 100*10) / 1e6, nil},
		{"judge a", s.Judging.Judges[1].Spend, 3, 1, 1, 1, 1000, 50, 400, 400, (1000*1 + 50*2) / 1e6, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.got
			if g.Requests != tt.requests || g.Live != tt.live || g.Cached != tt.cached || g.Shared != tt.shar {
				t.Errorf("requests %d live %d cached %d shared %d, want %d %d %d %d",
					g.Requests, g.Live, g.Cached, g.Shared, tt.requests, tt.live, tt.cached, tt.shar)
			}
			// What was neither sent nor answered without a server was
			// abandoned: the one judge-b request never dispatched.
			abandoned := 0
			if tt.name == "judging" || tt.name == "judge b first, as configured" {
				abandoned = 1
			}
			if g.Abandoned != abandoned || g.Live+g.Cached+g.Shared+g.Abandoned != g.Requests {
				t.Errorf("abandoned %d, want %d; live+cached+shared+abandoned %d, requests %d",
					g.Abandoned, abandoned, g.Live+g.Cached+g.Shared+g.Abandoned, g.Requests)
			}
			if g.PromptTokens != tt.in || g.CompletionTokens != tt.out {
				t.Errorf("tokens %d/%d, want %d/%d", g.PromptTokens, g.CompletionTokens, tt.in, tt.out)
			}
			if g.WallMS != tt.wallMS || g.GPUMS != tt.gpuMS {
				t.Errorf("wall %dms GPU %dms, want %d %d", g.WallMS, g.GPUMS, tt.wallMS, tt.gpuMS)
			}
			if c := costOf(g.CostUSD); c < tt.cost-1e-12 || c > tt.cost+1e-12 {
				t.Errorf("cost %g, want %g", c, tt.cost)
			}
			if len(g.Unpriced) != len(tt.unpriced) || len(g.Unpriced) > 0 && g.Unpriced[0] != tt.unpriced[0] {
				t.Errorf("unpriced %q, want %q", g.Unpriced, tt.unpriced)
			}
		})
	}
	if j := s.Judging.Judges; j[0].Judge != "b" || j[0].Model != "judge-b" || j[1].Judge != "a" {
		t.Errorf("judges %+v, want b (judge-b) then a", j)
	}
}
