package runner

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/state"
)

// A long reply is a preview in the live state, whole in the ledger, and
// whole in what the judge read.
func TestLongRepliesArePreviewsLiveAndWholeInTheLedger(t *testing.T) {
	t.Parallel()
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
			// One sample says no more than its judgment: the live state keeps
			// none, and never the judge's words.
			if j := c.Judgment("j"); j == nil || j.Status != state.JudgmentDone ||
				len(j.Samples) > 0 && (j.Samples[0].Raw != "" || j.Samples[0].Reason != "") || len(j.Samples) == 1 && j.Samples[0].ParseErr == "" {
				t.Errorf("%s × %s: the live judgment keeps the judge's words: %+v", c.Model, c.Test, j)
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

// The live state keeps each sample's vote and none of the judge's words;
// a lone sample that adds nothing to its judgment is not kept at all.
func TestClipSamplesKeepsVotesNotWords(t *testing.T) {
	t.Parallel()
	words := scoring.Sample{Raw: "long reply VERDICT: PASS", Reasoning: "thinking", Reason: "because", Pass: true, Score: 0.9}
	three := []scoring.Sample{words, {Raw: "r", Pass: false, Score: 0.2, Reason: "no"}, {Raw: "x", ParseErr: "no verdict line"}}
	got, cut := clipSamples(three)
	if !cut || len(got) != 3 {
		t.Fatalf("three samples clipped to %+v (cut %v)", got, cut)
	}
	for i, s := range got {
		if s.Raw != "" || s.Reasoning != "" || s.Reason != "" {
			t.Errorf("sample %d keeps words: %+v", i, s)
		}
		if s.Pass != three[i].Pass || s.Score != three[i].Score || s.ParseErr != three[i].ParseErr {
			t.Errorf("sample %d lost its vote: %+v, was %+v", i, s, three[i])
		}
	}
	if three[0].Raw == "" {
		t.Error("clipSamples changed its argument")
	}
	if got, cut := clipSamples([]scoring.Sample{words}); !cut || got != nil {
		t.Errorf("a lone sample with words clipped to %+v (cut %v), want none", got, cut)
	}
	lone := []scoring.Sample{{Raw: "?", ParseErr: "no verdict line"}}
	if got, _ := clipSamples(lone); len(got) != 1 || got[0].ParseErr == "" {
		t.Errorf("a lone sample's parse error is lost: %+v", got)
	}
	bare := []scoring.Sample{{Pass: true, Score: 1}}
	if got, cut := clipSamples(bare); cut || len(got) != 1 {
		t.Errorf("a sample with nothing to cut changed: %+v (cut %v)", got, cut)
	}
}
