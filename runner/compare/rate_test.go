package compare

import (
	"encoding/json"
	"strings"
	"testing"
)

// counts adds outcomes as a run would: "P" pass by the judge, "F" a check
// failed, "J" a FAIL by the judge, "E" a server error, "u" unjudged, "r" in
// inference, "c" cancelled.
func counts(s string) Counts {
	var c Counts
	for _, r := range s {
		switch r {
		case 'P':
			c.Add(Pass, true)
		case 'F':
			c.Add(Fail, false)
		case 'J':
			c.Add(Fail, true)
		case 'E':
			c.Add(Error, false)
		case 'u':
			c.Add(Unjudged, false)
		case 'r':
			c.Add(Unfinished, false)
		case 'c':
			c.Add(None, false)
		}
	}
	return c
}

// Pending cells are never failures: a rate is of decided cells, comes with
// its bounds while cells are pending, and is unknown where the judge has
// decided nothing of what waits for it.
func TestARateCountsPendingCellsAsNeitherPassNorFail(t *testing.T) {
	for _, c := range []struct {
		name, cells, text, note string
		known, provisional      bool
	}{
		{"all decided", "PPPJ", "75%", "3/4", true, false},
		{"checks failed, the judge's ✓ still to come", "FFuuuu", "—", "4 pending", false, true},
		{"stopped before judging", "FEuuuuc", "—", "4 pending", false, true},
		{"the judge has begun", "FPuu", "25–75%", "1/2, 2 pending", true, true},
		{"inference still running, no judge needed yet", "FEr", "0–33%", "0/2, 1 pending", true, true},
		{"nothing run", "rrr", "—", "3 pending", false, true},
		{"all cancelled", "cc", "—", "nothing decided", false, false},
		{"checks only, all done", "PPF", "67%", "2/3", true, false},
	} {
		n := counts(c.cells)
		if n.Known() != c.known || n.Provisional() != c.provisional {
			t.Errorf("%s: known %v provisional %v; want %v %v", c.name, n.Known(), n.Provisional(), c.known, c.provisional)
		}
		if got := n.RateText(); got != c.text {
			t.Errorf("%s: RateText %q; want %q", c.name, got, c.text)
		}
		if got := n.RateNote(); got != c.note {
			t.Errorf("%s: RateNote %q; want %q", c.name, got, c.note)
		}
		if (n.PassRate() == nil) == c.known {
			t.Errorf("%s: PassRate %v with known %v", c.name, n.PassRate(), c.known)
		}
		if n.RateText() == "0%" && n.Pending > 0 {
			t.Errorf("%s: 0%% with %d cells pending", c.name, n.Pending)
		}
	}
}

// A ranking mid-run puts no model whose ✓ still wait below one whose
// failures came first, and its JSON says null for a rate it cannot give.
func TestARankingMidRunDoesNotRankPendingPassesAsFailures(t *testing.T) {
	r := Run{ID: "r", Judge: "j", Models: []string{"good", "bad"}, Tests: []string{"a", "b", "c"}}
	for i, test := range r.Tests {
		// good: every reply passed its checks and awaits the judge.
		r.Cells = append(r.Cells, Cell{Model: "good", Test: test, Outcome: Unjudged})
		o := Fail
		if i == 2 {
			o = Unjudged
		}
		r.Cells = append(r.Cells, Cell{Model: "bad", Test: test, Outcome: o})
	}
	rep, err := Runs(Options{}, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Runs[0].Ranking {
		if m.RateText() != "—" || m.Rated() != 0 {
			t.Errorf("%s: rate %s over %d cells; want unknown while its judge has decided nothing", m.Model, m.RateText(), m.Rated())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"pass_rate":null`) || !strings.Contains(string(b), `"provisional":true`) {
		t.Errorf("JSON of an unknown rate: %s", b)
	}
	var sb strings.Builder
	if err := rep.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "provisional: 4 cells pending") || strings.Contains(sb.String(), " 0% ") {
		t.Errorf("text report mid-run:\n%s", sb.String())
	}
}

// Runs judged by different judges are compared with a warning.
func TestComparingRunsOfDifferentJudgesWarns(t *testing.T) {
	a := Run{ID: "a", Judge: "big", Models: []string{"m"}, Cells: []Cell{{Model: "m", Test: "t", Outcome: Pass, Judged: true}}}
	b := a
	b.ID = "b"
	rep, err := Runs(Options{}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("same judge: warnings %v", rep.Warnings)
	}
	b.Judge = "small"
	if rep, err = Runs(Options{}, a, b); err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "judge big vs judge small") {
		t.Errorf("different judges: warnings %v", rep.Warnings)
	}
	var sb strings.Builder
	_ = rep.WriteText(&sb)
	if !strings.HasPrefix(sb.String(), "warning: runs a and b were judged differently") {
		t.Errorf("text report does not open with the warning:\n%s", sb.String())
	}
}
