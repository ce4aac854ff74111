package cli

import (
	"context"
	"path/filepath"
	"pitwall/edges/qualify"
	"slices"
	"strings"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/judge/scoring"
	"pitwall/ui"
)

// The live grid's snapshots follow a real qualification on the simulator:
// answers only grow, a cell is decided only once its answers are all in,
// and the last snapshot is final and says what the report says, cell by
// cell (✓/✗ against the expected verdict) and judge by judge.
func TestQualifyGridFollowsARealQualification(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scale := 0.01
	cfg, tests, err := config.LoadQualify(qualifyExample(t), config.Overrides{DB: filepath.Join(dir, "ledger.db"), TimeScale: &scale},
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a := mustOpenApp(t, cfg)
	defer a.Close()
	var judges []config.Judge
	for _, n := range cfg.JudgeNames() {
		j, _ := cfg.Judge(n)
		judges = append(judges, j)
	}
	started := time.Now()
	if err := qualify.StartRun(a.led, a.runID, cfg, tests, started); err != nil {
		t.Fatal(err)
	}
	w := map[string]float64{}
	for _, j := range judges {
		w[j.Name] = j.Weight
	}
	opts := qualify.Options{MinScore: cfg.Scoring.MinScore, Jury: &qualify.JuryOptions{Aggregation: cfg.Scoring.Aggregation,
		DisagreementMax: cfg.Scoring.DisagreementMax, ReportDisagreement: cfg.Scoring.ReportDisagreement, Weights: w}}
	watch := newQualifyWatch(cfg, a.runID, tests, judges, opts, 0.9, started)
	watch.snaps = make(chan *ui.Qualify, 1)
	q := &qualify.Qualification{Cfg: cfg, Tests: tests, Judges: judges, Fleet: a.fleet, Led: a.led, RunID: a.runID,
		Backoff: qualifyBackoff, Watch: watch}

	seen := make(chan []*ui.Qualify, 1)
	go func() {
		var all []*ui.Qualify
		for s := range watch.snaps {
			all = append(all, s)
			if s.Final {
				break
			}
		}
		seen <- all
	}()
	jobs := qualify.Jobs(cfg, tests, judges)
	calls, err := runPublishing(context.Background(), q, watch, jobs)
	if err != nil {
		t.Fatal(err)
	}
	snaps := <-seen

	last := snaps[len(snaps)-1]
	wantJudges := []string{"exact", "good", "noisy", scoring.JuryName}
	if !last.Final || last.Answers != len(jobs) || last.Total != len(jobs) || strings.Join(last.Judges, ",") != strings.Join(wantJudges, ",") {
		t.Fatalf("last snapshot: final %v, %d/%d answers, judges %v; want final, %d/%d, %v",
			last.Final, last.Answers, last.Total, last.Judges, len(jobs), len(jobs), wantJudges)
	}
	prev := -1
	for _, s := range snaps {
		if s.Answers < prev {
			t.Errorf("answers went back from %d to %d", prev, s.Answers)
		}
		prev = s.Answers
		for _, r := range s.Rows {
			for i, c := range r.Cells {
				if c.Verdict != "" && c.Answers < c.Of {
					t.Errorf("%s × %s decided at %d of %d answers", r.Case, s.Judges[i], c.Answers, c.Of)
				}
			}
		}
	}

	cases := make([]qualify.Case, len(tests))
	for i, tt := range tests {
		cases[i] = qualify.Case{ID: tt.ID, Expect: tt.Expect}
	}
	rep := qualify.Figures(cases, calls, opts)
	wrong := 0
	for i, row := range rep.Rows {
		got := last.Rows[i]
		for _, want := range row.Cells {
			col := slices.Index(last.Judges, want.Judge)
			c := got.Cells[col]
			if c.Verdict != want.Verdict || c.Correct != want.Correct || c.Answers != c.Of {
				t.Errorf("%s × %s: %s correct %v (%d/%d answers); the report says %s correct %v",
					row.Case, want.Judge, c.Verdict, c.Correct, c.Answers, c.Of, want.Verdict, want.Correct)
			}
			if !c.Correct {
				wrong++
			}
		}
	}
	for _, jq := range rep.Judges {
		f := last.Figures[slices.Index(last.Judges, jq.Judge)]
		if f.Judge != jq.Judge || f.Accuracy != jq.Accuracy || f.Kappa != jq.Kappa.Kappa || f.Verdicts != jq.Verdicts ||
			f.Below != (jq.Accuracy < 0.9) {
			t.Errorf("figures of %s: %+v; the report says accuracy %.3f κ %.2f over %d, below 0.9 %v",
				jq.Judge, f, jq.Accuracy, jq.Kappa.Kappa, jq.Verdicts, jq.Accuracy < 0.9)
		}
	}
	t.Logf("%d snapshots, %d answers, %d cells not as expected", len(snaps), last.Answers, wrong)
}

// Headless, qualify says on stderr when each judge's answers are all in,
// with its accuracy, and prints the tables on stdout.
func TestQualifyHeadlessSaysWhenEachJudgeIsDone(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "ledger.db")
	code, out, stderr := inproc(t, "qualify", qualifyExample(t), "--headless", "--samples", "2", "--time-scale", "0", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, j := range []string{"exact", "good", "noisy"} {
		if !strings.Contains(stderr, "pitwall: judge "+j+": all 48 answers in, accuracy ") {
			t.Errorf("stderr does not say judge %s is done:\n%s", j, stderr)
		}
	}
	if !strings.Contains(out, "κ vs expected") || strings.Contains(out, "pitwall: judge") {
		t.Errorf("stdout is not the tables alone:\n%s", out)
	}
}
