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
		inference := uiSpend(s.Inference.Spend)
		// Attempts apart from cells: a retry or a resend is one more
		// request for the same cell. Judging's requests are samples, many
		// to a cell by design, so its line keeps to requests.
		inference.Cells = s.Inference.Cells
		return inference, uiSpend(s.Judging.Spend), true
	}
}

func uiSpend(s history.Spend) ui.Spend {
	out := ui.Spend{Requests: s.Requests, Cached: s.Cached, Shared: s.Shared, Abandoned: s.Abandoned,
		PromptTokens: s.PromptTokens, CompletionTokens: s.CompletionTokens,
		Wall: time.Duration(s.WallMS) * time.Millisecond, GPU: time.Duration(s.GPUMS) * time.Millisecond,
		Unpriced: s.Unpriced}
	if s.CostUSD != nil {
		out.Cost, out.Priced = *s.CostUSD, true
	}
	return out
}
