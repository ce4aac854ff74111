package ui

import (
	"strings"
	"testing"

	"pitwall/runner/state"
)

// The re-judge question names what the calls should cost when the caller
// can estimate it, asks the estimate once (not on every frame), and says
// nothing of tokens when it cannot.
func TestRejudgeQuestionShowsTheEstimate(t *testing.T) {
	t.Parallel()
	type asked struct {
		refs    int
		judge   string
		samples int
	}
	cases := []struct {
		name         string
		tokens       int
		cost         float64
		priced, ok   bool
		want, absent string
	}{
		{name: "priced", tokens: 12345, cost: 0.0421, priced: true, ok: true, want: "judge calls, ~12,345 tokens, ~$0.042; "},
		{name: "unpriced", tokens: 980, ok: true, want: "judge calls, ~980 tokens; ", absent: "$"},
		{name: "no estimate", want: "judge calls; ", absent: "tokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls []asked
			opts := Options{Ledger: ledgerFuncs{estimate: func(refs []state.CellRef, judge string, samples int) (int, float64, bool, bool) {
				calls = append(calls, asked{len(refs), judge, samples})
				return tc.tokens, tc.cost, tc.priced, tc.ok
			}}}
			snap := sceneJudged()
			m := testModel(200, 30, opts, newFakeCtrl(snap))
			show(m, snap)
			run(m, press(m, "R"))
			got := drawn(m)
			_ = drawn(m)
			if !strings.Contains(got, tc.want) || tc.absent != "" && strings.Contains(got[strings.Index(got, "Re-judge"):], tc.absent) {
				t.Fatalf("the question lacks %q (or has %q):\n%s", tc.want, tc.absent, got)
			}
			want := asked{m.board.counts.Completed, m.judge, max(snap.Plan.Samples, 1)}
			if len(calls) != 1 || calls[0] != want {
				t.Fatalf("Estimate was asked %v, want once with %v", calls, want)
			}
		})
	}
}
