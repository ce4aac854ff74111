package ui

import (
	"errors"
	"strings"
	"testing"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// A clipped cell opens with its preview and a note, then shows the whole
// text once Ledger.Whole has read it; an error says so in place of it.
func TestDetailReadsAClippedCellWhole(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	whole := strings.Repeat("The whole answer goes on. ", 12) + "THE END"
	set(snap, 0, 0, 0, func(c *state.Cell) {
		c.EditReply().Output, c.Clipped = "The whole answer goes on. The whole…", true
	})
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"read", nil, "THE END"},
		{"failed", errors.New("ledger locked"), "the whole text could not be read: ledger locked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []state.CellRef
			opts := Options{Ledger: ledgerFuncs{whole: func(ref state.CellRef) (*state.Cell, error) {
				asked = append(asked, ref)
				if tc.err != nil {
					return nil, tc.err
				}
				c := *snap.Cell(0, 0, 0)
				c.EditReply().Output, c.Clipped = whole, false
				j := *c.Judgment("gemma")
				j.Samples = []scoring.Sample{{Pass: true, Score: j.Score, Raw: "the judge's whole reply"}}
				state.SetJudgment(&c, &j)
				return &c, nil
			}}}
			m := testModel(100, 60, opts, newFakeCtrl(snap))
			show(m, snap)
			cmd := press(m, "enter")
			if got := drawn(m); !strings.Contains(got, "reading the whole text") || strings.Contains(got, "THE END") {
				t.Fatalf("before the read, want the preview and a note:\n%s", got)
			}
			run(m, cmd)
			got := drawn(m)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("after the read, want %q:\n%s", tc.want, got)
			}
			if len(asked) != 1 || asked[0] != (state.CellRef{Test: snap.Tests[0].ID, Model: snap.Models[0]}) {
				t.Fatalf("Whole was asked %v", asked)
			}
		})
	}
}

// A verdict given after the cell was read whole keeps the preview note:
// its words are in the ledger, not in what was read, even when the live
// state keeps no sample of it (one vote says no more than its verdict).
func TestAVerdictNewerThanTheWholeCellStaysAPreview(t *testing.T) {
	t.Parallel()
	whole := &state.Cell{Model: "m", Test: "t", Status: state.Completed,
		Judgments: []*state.Judgment{{Judge: "j", Status: state.JudgmentDone, Verdict: scoring.Fail, Score: 0.2,
			Samples: []scoring.Sample{{Raw: "VERDICT: FAIL", Reason: "wrong", Score: 0.2}}}}, Reply: &state.Reply{Output: "the whole reply"}}
	rejudged := state.Cell{Model: "m", Test: "t", Status: state.Completed, Clipped: true,
		Judgments: []*state.Judgment{{Judge: "j", Status: state.JudgmentDone, Verdict: scoring.Pass, Score: 0.9}}, Reply: &state.Reply{Output: "the whole…"}}
	got := withWhole(rejudged, whole)
	if !got.Clipped || got.Said().Output != "the whole reply" || got.Judgment("j").Verdict != scoring.Pass {
		t.Errorf("re-judged since read: clipped %v, output %q, verdict %s; want a preview note, the whole reply, the new PASS",
			got.Clipped, got.Said().Output, got.Judgment("j").Verdict)
	}
	same := rejudged
	same.Judgments = []*state.Judgment{{Judge: "j", Status: state.JudgmentDone, Verdict: scoring.Fail, Score: 0.2}}
	got = withWhole(same, whole)
	if got.Clipped || len(got.Judgment("j").Samples) != 1 || got.Judgment("j").Samples[0].Reason != "wrong" {
		t.Errorf("unchanged since read: clipped %v, samples %+v; want the whole samples, no note", got.Clipped, got.Judgment("j").Samples)
	}
}

// The live state keeps only the checks that failed; the detail view shows
// the passed ones too once the cell is read whole, and labels its scroll
// position as one.
func TestDetailShowsPassedChecksFromTheWholeCell(t *testing.T) {
	t.Parallel()
	snap := sceneJudged()
	set(snap, 4, 1, 0, func(c *state.Cell) { c.Clipped = true }) // failed is-json, the rest cut
	opts := Options{Ledger: ledgerFuncs{whole: func(ref state.CellRef) (*state.Cell, error) {
		c := *snap.Cell(4, 1, 0)
		c.Clipped = false
		c.EditReply().Checks = []scoring.CheckResult{{Name: "not-empty", Pass: true}, {Name: "is-json", Reason: "the reply is not JSON"},
			{Name: "max-length", Pass: true}}
		return &c, nil
	}}}
	m := testModel(100, 16, opts, newFakeCtrl(snap))
	show(m, snap)
	cmd := press(m, "j", "j", "j", "j", "l", "enter")
	run(m, cmd)
	var all strings.Builder
	for range 20 {
		all.WriteString(drawn(m))
		press(m, "pgdown")
	}
	got := all.String()
	for _, want := range []string{"✓ not-empty", "❌ is-json", "✓ max-length"} {
		if !strings.Contains(got, want) {
			t.Errorf("the detail view does not list %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "scroll 0% · esc back") || !strings.Contains(got, "scroll 100% · esc back") {
		t.Errorf("the scroll position is not labelled as one:\n%s", got)
	}
}
