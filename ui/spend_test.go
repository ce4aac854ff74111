package ui

import (
	"testing"
	"time"
)

func TestSpendLinesShowInferenceAndJudgingApart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		inference, judging Spend
		opts               Options
		want               string
	}{
		{"unpriced, nothing cached",
			Spend{Requests: 80, PromptTokens: 2460, CompletionTokens: 2455, Wall: 432 * time.Millisecond, GPU: 2779 * time.Millisecond},
			Spend{Requests: 54, Shared: 17, PromptTokens: 13769, CompletionTokens: 2281, Wall: 62 * time.Second, GPU: 125 * time.Second},
			Options{},
			"inference 80 requests · 2,460 in / 2,455 out tokens · 432ms wall · 2.8s GPU\n" +
				"judging   54 requests (17 shared) · 13,769 in / 2,281 out tokens · 1m02s wall · 2m05s GPU\n"},
		{"priced, one judge not, in ASCII",
			Spend{Requests: 3, Priced: true, Cost: 0.000415},
			Spend{Requests: 1234567, Cached: 2, Shared: 1, PromptTokens: 1234567, Priced: true, Cost: 12.345, Unpriced: []string{"small"}},
			Options{ASCII: true},
			"inference 3 requests - 0 in / 0 out tokens - 0s wall - 0s GPU - $0.00042\n" +
				"judging   1234567 requests (2 cached, 1 shared) - 1,234,567 in / 0 out tokens - 0s wall - 0s GPU - $12.35 (small unpriced)\n"},
		// Issue 17: "38 requests" where 23 reached a server.
		{"some never sent, retries beside cells",
			Spend{Requests: 38, Cells: 30, Abandoned: 15, PromptTokens: 230, CompletionTokens: 900, Wall: time.Second, GPU: time.Second},
			Spend{Requests: 10, Shared: 2, Abandoned: 3},
			Options{},
			"inference 38 requests for 30 cells (23 sent, 15 abandoned before sending) · 230 in / 900 out tokens · 1.0s wall · 1.0s GPU\n" +
				"judging   10 requests (5 sent, 2 shared, 3 abandoned before sending) · 0 in / 0 out tokens · 0s wall · 0s GPU\n"},
		{"every cell once: cells go without saying",
			Spend{Requests: 8, Cells: 8},
			Spend{},
			Options{},
			"inference 8 requests · 0 in / 0 out tokens · 0s wall · 0s GPU\n" +
				"judging   0 requests · 0 in / 0 out tokens · 0s wall · 0s GPU\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SpendLines(tt.inference, tt.judging, tt.opts); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
