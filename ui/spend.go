package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Spend is what inference or judging cost a run, for SpendLines: requests
// (Cached and Shared of them answered without a server, Abandoned never
// sent: given up after max_wait, stopped or cancelled while they waited),
// the cells they were attempts for (0 leaves cells out), the tokens and
// time of those a server answered, and their cost when priced.
type Spend struct {
	Requests, Cached, Shared       int
	Abandoned, Cells               int
	PromptTokens, CompletionTokens int
	// Wall is how long at least one of the requests was in flight; GPU is
	// the sum of their latencies, the slot time they held.
	Wall, GPU time.Duration
	Cost      float64
	Priced    bool     // Cost is known, for every part but Unpriced
	Unpriced  []string // judges or models that used tokens with no price
}

// SpendLines is one line for inference and one for judging, apart, to
// print with the Summary:
//
//	inference 60 requests · 3,412 in / 3,120 out tokens · 1m02s wall · 3m10s GPU
//	judging   120 requests (40 cached) · 12,000 in / 2,400 out tokens · 40s wall · 1m20s GPU · $0.12
//
// A request never sent is never counted as one that was: once any was
// abandoned, the line says how many were sent and how many were not, and
// retries show as more requests than cells:
//
//	inference 38 requests for 30 cells (23 sent, 15 abandoned before sending) · …
func SpendLines(inference, judging Spend, opts Options) string {
	return fold(plainCommon(opts), spendLine("inference", inference)+spendLine("judging", judging))
}

func spendLine(label string, s Spend) string {
	n := strconv.Itoa(s.Requests) + " requests"
	if s.Cells > 0 && s.Cells != s.Requests {
		n += " for " + strconv.Itoa(s.Cells) + " cells"
	}
	var free []string
	if s.Abandoned > 0 {
		free = append(free, strconv.Itoa(s.Requests-s.Cached-s.Shared-s.Abandoned)+" sent")
	}
	if s.Cached > 0 {
		free = append(free, strconv.Itoa(s.Cached)+" cached")
	}
	if s.Shared > 0 {
		free = append(free, strconv.Itoa(s.Shared)+" shared")
	}
	if s.Abandoned > 0 {
		free = append(free, strconv.Itoa(s.Abandoned)+" abandoned before sending")
	}
	if len(free) > 0 {
		n += " (" + strings.Join(free, ", ") + ")"
	}
	parts := []string{n,
		thousands(s.PromptTokens) + " in / " + thousands(s.CompletionTokens) + " out tokens",
		spendDur(s.Wall) + " wall", spendDur(s.GPU) + " GPU"}
	if s.Priced {
		cost := "$" + strconv.FormatFloat(s.Cost, 'f', costDigits(s.Cost), 64)
		if len(s.Unpriced) > 0 {
			cost += " (" + strings.Join(s.Unpriced, ", ") + " unpriced)"
		}
		parts = append(parts, cost)
	}
	return fmt.Sprintf("%-9s %s\n", label, strings.Join(parts, " · "))
}

// costDigits shows cents, and a small cost to two significant digits.
func costDigits(c float64) int {
	d := 2
	for lim := 0.1; c > 0 && c < lim && d < 8; lim /= 10 {
		d++
	}
	return d
}

func spendDur(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return plainDur(d)
}

// thousands writes n with comma separators: 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
