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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SpendLines(tt.inference, tt.judging, tt.opts); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
