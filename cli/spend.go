package cli

import (
	"time"

	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
	"pitwall/ui"
)

// spendOf is the summary's inference and judging lines, read from the
// ledger: the snapshot carries no tokens of judges.
func spendOf(led *ledger.Ledger) func(*state.BatteryRun) (ui.Spend, ui.Spend, bool) {
	return func(b *state.BatteryRun) (ui.Spend, ui.Spend, bool) {
		if b == nil || led == nil {
			return ui.Spend{}, ui.Spend{}, false
		}
		s, err := history.RunSpending(led, b.ID)
		if err != nil {
			return ui.Spend{}, ui.Spend{}, false
		}
		return uiSpend(s.Inference.Spend), uiSpend(s.Judging.Spend), true
	}
}

func uiSpend(s history.Spend) ui.Spend {
	out := ui.Spend{Requests: s.Requests, Cached: s.Cached, Shared: s.Shared,
		PromptTokens: s.PromptTokens, CompletionTokens: s.CompletionTokens,
		Wall: time.Duration(s.WallMS) * time.Millisecond, GPU: time.Duration(s.GPUMS) * time.Millisecond,
		Unpriced: s.Unpriced}
	if s.CostUSD != nil {
		out.Cost, out.Priced = *s.CostUSD, true
	}
	return out
}
