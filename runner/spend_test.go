package runner

import (
	"math"
	"testing"

	"pitwall/runner/history"
)

// The snapshot carries what judging spent as it goes, and the final one
// agrees with the ledger's own account of the judge requests.
func TestSnapshotsCarryJudgingsSpending(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet+`
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
price_in = 3
price_out = 15
`)
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	got := b.Judging
	if got.Requests == 0 || got.PromptTokens == 0 || !got.Priced {
		t.Fatalf("judging spent %+v: want requests, tokens and a price", got)
	}
	sp, err := history.RunSpending(h.led, h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := sp.Judging
	if got.Requests != want.Live || got.PromptTokens != int64(want.PromptTokens) || got.CompletionTokens != int64(want.CompletionTokens) {
		t.Errorf("snapshot: %d requests, %d/%d tokens; ledger: %d requests, %d/%d tokens",
			got.Requests, got.PromptTokens, got.CompletionTokens, want.Live, want.PromptTokens, want.CompletionTokens)
	}
	cost := (3*float64(got.PromptTokens) + 15*float64(got.CompletionTokens)) / 1e6
	if want.CostUSD == nil || math.Abs(got.Cost-cost) > 1e-12 || math.Abs(got.Cost-*want.CostUSD) > 1e-9 {
		t.Errorf("snapshot cost $%g, from its tokens $%g, ledger %v", got.Cost, cost, want.CostUSD)
	}
}
