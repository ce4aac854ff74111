package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/state"
)

// A finished cell keeps none of its texts in the live state: they are
// whole in the ledger, and whole in what the judge read.
func TestRepliesAreLeftToTheLedgerAndReadWholeByTheJudge(t *testing.T) {
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
			if c.Status != state.Completed {
				continue
			}
			if !c.Clipped || c.Reply != nil {
				t.Errorf("%s × %s: the live cell keeps its reply (clipped %v): %+v", c.Model, c.Test, c.Clipped, c.Reply)
			}
			whole, err := history.LoadCell(h.led, h.run.ID(), state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat})
			if err != nil {
				t.Fatal(err)
			}
			out := []rune(whole.Said().Output)
			if len(out) <= previewRunes {
				continue
			}
			clipped++
			// The judge read the whole reply: its last words are in its request.
			piece, _ := json.Marshal(string(out[len(out)-20:]))
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
