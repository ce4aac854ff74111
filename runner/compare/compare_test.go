package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// battery builds a run of models over tests t1..t10 (t1–t5 "tools",
// t6–t10 "json") where outcome(model, test index) decides each cell.
func battery(id string, models []string, outcome func(m string, i int) Outcome) Run {
	r := Run{ID: id, Name: "demo", Judge: "j1", Judges: []string{"j1"}, Models: models, Categories: map[string]string{}}
	for i := 1; i <= 10; i++ {
		t := fmt.Sprintf("t%d", i)
		r.Tests = append(r.Tests, t)
		r.Categories[t] = "tools"
		if i > 5 {
			r.Categories[t] = "json"
		}
	}
	for _, m := range models {
		for i := 1; i <= 10; i++ {
			o := outcome(m, i)
			score := 0.0
			if o == Pass {
				score = 1
			}
			r.Cells = append(r.Cells, Cell{Model: m, Test: fmt.Sprintf("t%d", i), Outcome: o, Score: score,
				Latency: time.Duration(i*100) * time.Millisecond, TTFT: time.Duration(i*10) * time.Millisecond,
				TokensPerSec: float64(10 * i), PromptTokens: 5, CompletionTokens: 7})
		}
	}
	return r
}

// first is the base run: a passes all 10; b passes 8, fails t9 and errors
// on t10; c passes t1 and t2, fails the rest, and its judge erred on t10.
func first(m string, i int) Outcome {
	switch {
	case m == "a":
		return Pass
	case m == "b" && i == 9:
		return Fail
	case m == "b" && i == 10:
		return Error
	case m == "b":
		return Pass
	case i <= 2:
		return Pass
	case i == 10:
		return JudgeError
	}
	return Fail
}

func statsOf(t *testing.T, r RunReport, model string) ModelStats {
	t.Helper()
	for _, m := range r.Ranking {
		if m.Model == model {
			return m
		}
	}
	t.Fatalf("no %s in the ranking", model)
	return ModelStats{}
}

func TestRankingWithTiesAndPairs(t *testing.T) {
	rep, err := Runs(Options{}, battery("r1", []string{"c", "b", "a"}, first))
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	var order []string
	for _, m := range r.Ranking {
		order = append(order, m.Model)
	}
	if !slices.Equal(order, []string{"a", "b", "c"}) {
		t.Fatalf("ranking %v, want a, b, c", order)
	}
	// Wilson: a 10/10 [0.72, 1], b 8/10 [0.49, 0.94], c 2/9 [0.06, 0.55].
	// a and b overlap, b and c overlap, a lies wholly above c.
	for _, tt := range []struct {
		model         string
		rank          int
		tied          []string
		pass, decided int
		judgeErrors   int
	}{
		{"a", 1, []string{"b"}, 10, 10, 0},
		{"b", 1, []string{"a", "c"}, 8, 10, 0},
		{"c", 2, []string{"b"}, 2, 9, 1},
	} {
		m := statsOf(t, r, tt.model)
		if m.Rank != tt.rank || !slices.Equal(m.Tied, tt.tied) || m.Pass != tt.pass || m.Decided != tt.decided || m.JudgeError != tt.judgeErrors {
			t.Errorf("%s: rank %d tied %v pass %d/%d judge errors %d; want rank %d tied %v pass %d/%d judge errors %d",
				tt.model, m.Rank, m.Tied, m.Pass, m.Decided, m.JudgeError, tt.rank, tt.tied, tt.pass, tt.decided, tt.judgeErrors)
		}
	}
	if b := statsOf(t, r, "b"); b.Error != 1 || b.Fail != 1 {
		t.Errorf("b: %d errors, %d fails; want 1 and 1 (an error counts against the model)", b.Error, b.Fail)
	}
	if !slices.Equal(r.Categories, []string{"tools", "json"}) {
		t.Errorf("categories %v", r.Categories)
	}
	c := statsOf(t, r, "c")
	if got := c.Categories; len(got) != 2 || got[0].Pass != 2 || got[0].Decided != 5 || got[1].Pass != 0 || got[1].Decided != 4 {
		t.Errorf("c by category: %+v, want tools 2/5, json 0/4", got)
	}
	// Latencies 100..1000 ms: median 550, p95 = 955 (h = 8.55).
	if c.LatencyMS.Median != 550 || !near(c.LatencyMS.P95, 955, 1e-9) || c.TTFTMS.Median != 55 || c.TokensPerSec.Median != 55 {
		t.Errorf("c spreads: latency %+v ttft %+v tok/s %+v", c.LatencyMS, c.TTFTMS, c.TokensPerSec)
	}
	if c.PromptTokens != 50 || c.CompletionTokens != 70 {
		t.Errorf("c tokens %d/%d, want 50/70", c.PromptTokens, c.CompletionTokens)
	}

	pairs := map[string]Paired{}
	for _, p := range r.Pairs {
		pairs[p.A+"-"+p.B] = p
	}
	if len(pairs) != 3 {
		t.Fatalf("pairs %v, want a-b, a-c, b-c", r.Pairs)
	}
	// a vs c on the 9 cells c decided: 7 only a passed, none only c: 2/2⁷.
	if p := pairs["a-c"]; p.Shared != 9 || p.Both != 2 || p.Test.OnlyA != 7 || p.Test.OnlyB != 0 || !near(p.Test.P, 0.015625, 1e-12) || p.Better != "a" {
		t.Errorf("a-c: %+v", p)
	}
	// a vs b: 2 only a passed (b's fail and error): p = 0.5, noise.
	if p := pairs["a-b"]; p.Shared != 10 || p.Test.OnlyA != 2 || !near(p.Test.P, 0.5, 1e-12) || p.Better != "" {
		t.Errorf("a-b: %+v", p)
	}
	if p := pairs["a-b"]; !strings.Contains(p.Says, "may be noise") {
		t.Errorf("a-b says %q", p.Says)
	}
	if p := pairs["a-c"]; !strings.HasPrefix(p.Says, "a is better than c") {
		t.Errorf("a-c says %q", p.Says)
	}
}

func TestRankByScoreUsesBootstrap(t *testing.T) {
	rep, err := Runs(Options{By: ByScore, Seed: 3}, battery("r1", []string{"a", "b", "c"}, first))
	if err != nil {
		t.Fatal(err)
	}
	c := statsOf(t, rep.Runs[0], "c")
	if !near(c.Score.Value, 2.0/9, 1e-12) || c.Score.Lo > c.Score.Value || c.Score.Hi < c.Score.Value {
		t.Errorf("c score %+v, want 2/9 inside its interval", c.Score)
	}
	again, _ := Runs(Options{By: ByScore, Seed: 3}, battery("r1", []string{"a", "b", "c"}, first))
	x, _ := json.Marshal(rep)
	y, _ := json.Marshal(again)
	if !bytes.Equal(x, y) {
		t.Error("the same runs and seed gave two different reports")
	}
	if _, err := Runs(Options{By: "speed"}, battery("r1", []string{"a"}, first)); err == nil {
		t.Error("an unknown ranking was accepted")
	}
}

func TestModelWithNothingDecidedRanksLast(t *testing.T) {
	rep, err := Runs(Options{}, battery("r1", []string{"z", "a"}, func(m string, i int) Outcome {
		if m == "z" {
			return None
		}
		return Fail
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if r.Ranking[1].Model != "z" || len(r.Ranking[1].Tied) != 0 || len(r.Ranking[0].Tied) != 0 || RankLabel(r.Ranking[1]) != "—" {
		t.Fatalf("ranking %+v: z decided nothing and must rank last, tied with nobody", r.Ranking)
	}
}

func TestDiffOfTwoRuns(t *testing.T) {
	second := func(m string, i int) Outcome {
		switch {
		case m == "b" && i == 9: // fixed
			return Pass
		case m == "a" && i == 3: // broke
			return Fail
		case m == "c" && i == 5: // fail → error: flipped
			return Error
		case m == "c" && i == 10: // judged this time, but not shared
			return Pass
		}
		return first(m, i)
	}
	models := []string{"a", "b", "c"}
	rep, err := Runs(Options{}, battery("r1", models, first), battery("r2", models, second))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diffs) != 1 {
		t.Fatalf("%d diffs, want 1", len(rep.Diffs))
	}
	d := rep.Diffs[0]
	if d.Base != "r1" || d.Other != "r2" || !d.SameBattery || d.Shared != 29 {
		t.Errorf("diff %s → %s same battery %v shared %d; want r1 → r2, true, 29", d.Base, d.Other, d.SameBattery, d.Shared)
	}
	want := func(name string, got []Change, model, test string, from, to Outcome) {
		t.Helper()
		if len(got) != 1 || got[0].Model != model || got[0].Test != test || got[0].From != from || got[0].To != to {
			t.Errorf("%s = %+v, want %s × %s %s → %s", name, got, model, test, from, to)
		}
	}
	want("fixed", d.Fixed, "b", "t9", Fail, Pass)
	want("broke", d.Broke, "a", "t3", Pass, Fail)
	want("flipped", d.Flipped, "c", "t5", Fail, Error)
	if len(d.Models) != 3 || len(d.Cross) != 0 {
		t.Fatalf("per-model tests %d, cross %d; want 3 and 0", len(d.Models), len(d.Cross))
	}
	for _, p := range d.Models {
		if p.A != "r1" || p.B != "r2" || p.Better != "" || !strings.Contains(p.Says, p.Model+" in r1") {
			t.Errorf("per-model test %+v", p)
		}
	}
}

func TestCrossRunsWithOneModelEach(t *testing.T) {
	x := battery("rx", []string{"x"}, func(string, int) Outcome { return Pass })
	y := battery("ry", []string{"y"}, func(_ string, i int) Outcome {
		if i <= 2 {
			return Pass
		}
		return Fail
	})
	rep, err := Runs(Options{}, x, y)
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Diffs[0]
	if len(d.Models) != 0 || len(d.Cross) != 1 {
		t.Fatalf("models %d cross %d, want 0 and 1", len(d.Models), len(d.Cross))
	}
	// 8 tests only x passed: p = 2/2⁸.
	if p := d.Cross[0]; p.A != "x" || p.B != "y" || p.Test.OnlyA != 8 || !near(p.Test.P, 2.0/256, 1e-12) || p.Better != "x" {
		t.Errorf("cross %+v", p)
	}
}

func TestJudgeAgreement(t *testing.T) {
	r := battery("r1", []string{"a"}, first)
	r.Judges = []string{"j1", "j2", "j3", "jury"} // j3 is configured but judged nothing
	for i := range r.Cells {
		v2 := "pass"
		if i < 2 {
			v2 = "fail"
		}
		r.Cells[i].Verdicts = map[string]string{"j1": "pass", "j2": v2, "jury": "pass"}
	}
	r.Cells[9].Verdicts["j2"] = "error" // left out: not a judgment
	rep, err := Runs(Options{}, r)
	if err != nil {
		t.Fatal(err)
	}
	j := rep.Runs[0].Judges
	if len(j) != 1 || j[0].A != "j1" || j[0].B != "j2" || j[0].N != 9 || !near(j[0].Agreement, 7.0/9, 1e-12) {
		t.Fatalf("agreement %+v, want j1-j2 over 9 cells, 7/9, and no pair with j3", j)
	}
}

func TestWriteText(t *testing.T) {
	rep, err := Runs(Options{}, battery("r1", []string{"a", "b", "c"}, first), battery("r2", []string{"a", "b", "c"}, first))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"run r1 · demo · judge j1 · ranked by pass rate, 95% Wilson intervals",
		"=1    a ", "100%", "[72%, 100%]", "10/10",
		"by category", "tools", "2/5 40%",
		"a vs b: 2 cells only a passed, 0 only b passed, exact McNemar p = 0.5; the difference may be noise",
		"b is better than c",
		"run r1 → run r2: 29 shared cells, 0 fixed, 0 broke, 0 flipped",
		"a in r1 and a in r2 passed the same 10 of 10 shared cells",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}
