package runner

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"pitwall/runner/history"
	"pitwall/runner/state"
)

// A long reply is a preview in the live state, whole in the ledger, and
// whole in what the judge read.
func TestLongRepliesArePreviewsLiveAndWholeInTheLedger(t *testing.T) {
	cfg := testConfig(t, simFleet+`
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`)
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	clipped := 0
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if c.Status != state.Completed || !c.Clipped {
				continue
			}
			whole, err := history.LoadCell(h.led, h.run.ID(), state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat})
			if err != nil {
				t.Fatal(err)
			}
			if utf8.RuneCountInString(c.Output) > previewRunes {
				t.Errorf("%s × %s: the live output has %d runes, more than a preview", c.Model, c.Test, utf8.RuneCountInString(c.Output))
			}
			if len(whole.Output) <= len(c.Output) && whole.Output == c.Output {
				continue // the reasoning or the judge's reply was what was cut
			}
			clipped++
			if !strings.HasPrefix(whole.Output, strings.TrimSuffix(c.Output, "…")) {
				t.Errorf("%s × %s: the preview %q is not the start of the ledger's %q", c.Model, c.Test, c.Output, whole.Output)
			}
			// The judge read the whole reply: a piece past the preview's
			// cut is in its request.
			tail := []rune(whole.Output)[previewRunes:]
			piece, _ := json.Marshal(string(tail[:min(len(tail), 20)]))
			found := false
			for _, q := range reqs {
				if q.Purpose == "judge" && q.Test == c.Test && q.CandidateModel == c.Model &&
					strings.Contains(q.Input, strings.Trim(string(piece), `"`)) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s × %s: no judge request holds the reply past the preview (%s)", c.Model, c.Test, piece)
			}
			if j := c.Judgment("j"); j == nil || len(j.Samples) == 0 || j.Samples[0].Raw != "" {
				t.Errorf("%s × %s: the live judgment keeps the judge's reply: %+v", c.Model, c.Test, j)
			}
			if wj := whole.Judgment("j"); wj == nil || len(wj.Samples) == 0 || wj.Samples[0].Raw == "" {
				t.Errorf("%s × %s: the ledger's judgment lacks the judge's reply: %+v", c.Model, c.Test, wj)
			}
		}
	}
	if clipped == 0 {
		t.Fatal("no completed cell had a reply longer than a preview: the test proves nothing")
	}
}
