package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pitwall/config"
	"pitwall/runner/compare"
)

// demoSkills are the demo's simulated models' configured skills.
func demoSkills(t *testing.T) map[string]float64 {
	t.Helper()
	cfg, err := config.Load(demoPath(t), config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range cfg.Sim.Models {
		out[m.Name] = m.Skill
	}
	return out
}

// Two demo runs with different seeds rank the models as their skills say,
// within what 16 tests can tell apart: no model is ranked strictly above
// one whose skill is higher by 0.15 or more, the most skilled models rank
// first, and models whose Wilson intervals overlap are marked tied, both
// ways, in the JSON and with "=" in the table.
func TestCompareRanksTheDemoModelsConsistentlyWithTheirSkills(t *testing.T) {
	t.Parallel()
	db, a := demoRun(t, 1)
	_, b := demoRun(t, 2)
	skill := demoSkills(t)
	top := 0.0
	for _, s := range skill {
		top = max(top, s)
	}

	code, out, stderr := inproc(t, "compare", a, b, "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("compare --format json: exit %d: %s", code, stderr)
	}
	var rep compare.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].ID != a || rep.Runs[1].ID != b || len(rep.Diffs) != 1 {
		t.Fatalf("got %d runs and %d diffs, want runs %s, %s and one diff", len(rep.Runs), len(rep.Diffs), a, b)
	}
	if d := rep.Diffs[0]; !d.SameBattery || d.Shared == 0 || len(d.Models) != 5 {
		t.Errorf("diff: same battery %v, %d shared cells, %d paired models; want the same battery, some cells, 5 models", d.SameBattery, d.Shared, len(d.Models))
	}
	ties := 0
	for _, r := range rep.Runs {
		if len(r.Ranking) != 5 {
			t.Fatalf("run %s ranks %d models, want the demo's 5", r.ID, len(r.Ranking))
		}
		byModel := map[string]compare.ModelStats{}
		for _, m := range r.Ranking {
			byModel[m.Model] = m
			t.Logf("run %s: %-13s skill %.2f rank %d rate %.2f [%.2f, %.2f] tied %v", r.ID, m.Model, skill[m.Model], m.Rank, m.Rate.Value, m.Rate.Lo, m.Rate.Hi, m.Tied)
			if skill[m.Model] == top && m.Rank != 1 {
				t.Errorf("run %s: %s has the highest skill (%.2f) but rank %d", r.ID, m.Model, top, m.Rank)
			}
		}
		for _, x := range r.Ranking {
			for _, y := range r.Ranking {
				if skill[y.Model] >= skill[x.Model]+0.15 && x.Rank < y.Rank {
					t.Errorf("run %s: %s (skill %.2f) is ranked %d, strictly above %s (skill %.2f, rank %d)",
						r.ID, x.Model, skill[x.Model], x.Rank, y.Model, skill[y.Model], y.Rank)
				}
				if x.Model == y.Model {
					continue
				}
				overlap := x.Rate.Overlaps(y.Rate)
				if overlap != slices.Contains(x.Tied, y.Model) {
					t.Errorf("run %s: %s %v and %s %v overlap = %v, but tied = %v", r.ID, x.Model, x.Rate, y.Model, y.Rate, overlap, x.Tied)
				}
			}
			ties += len(x.Tied)
		}
	}
	// Sixteen tests tie most models, so the ranks alone say little; the
	// pass rates pooled over both runs must still order every two models
	// whose skills are 0.25 or more apart as their skills do.
	pooled := map[string][2]int{}
	for _, r := range rep.Runs {
		for _, m := range r.Ranking {
			p := pooled[m.Model]
			pooled[m.Model] = [2]int{p[0] + m.Pass, p[1] + m.Decided}
		}
	}
	rate := func(m string) float64 { return float64(pooled[m][0]) / float64(max(pooled[m][1], 1)) }
	pairs := 0
	for x := range pooled {
		for y := range pooled {
			if skill[x] >= skill[y]+0.25 {
				pairs++
				if rate(x) <= rate(y) {
					t.Errorf("pooled pass rate of %s (skill %.2f) is %.2f, not above %s's %.2f (skill %.2f)", x, skill[x], rate(x), y, rate(y), skill[y])
				}
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no two demo models are 0.25 apart in skill: the check above checks nothing")
	}
	if ties == 0 {
		t.Error("no two models tied: with 16 tests a model's 95% interval is some 40 points wide, so some must")
	}

	code, text, stderr := inproc(t, "compare", a, b, "--db", db)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, r := range rep.Runs {
		for _, m := range r.Ranking {
			if len(m.Tied) == 0 {
				continue
			}
			if !strings.HasPrefix(compare.RankLabel(m), "=") || !containsRow(text, compare.RankLabel(m), m.Model) {
				t.Errorf("the table does not mark %s tied (rank %q):\n%s", m.Model, compare.RankLabel(m), text)
			}
		}
	}
	for _, want := range []string{"run " + a, "run " + b, "tied with", "McNemar", "shared cells"} {
		if !strings.Contains(text, want) {
			t.Errorf("the table does not say %q:\n%s", want, text)
		}
	}
}

// containsRow reports whether some line of text starts with rank and then
// names model.
func containsRow(text, rank, model string) bool {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == rank && f[1] == model {
			return true
		}
	}
	return false
}

func TestCompareWritesReportsByFormatOrExtension(t *testing.T) {
	t.Parallel()
	db, a := demoRun(t, 1)
	_, b := demoRun(t, 2)
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		file string
		want []string
		code int
	}{
		{"markdown by extension", []string{"-o", "cmp.md"}, "cmp.md", []string{"| ", "qwen3-8b", a, b}, 0},
		{"html by flag", []string{"--format", "html", "-o", "cmp.out"}, "cmp.out", []string{"<html", a, b}, 0},
		{"by mean score", []string{"--by", "score", "-o", "score.txt"}, "score.txt", []string{"ranked by mean score"}, 0},
		{"csv is export's", []string{"--format", "csv"}, "", []string{"use text, json, md or html"}, 2},
		{"an unknown format gets compare's list", []string{"--format", "pdf"}, "", []string{"compare --format pdf: use text, json, md or html"}, 2},
		{"an unknown extension gets compare's list", []string{"-o", "cmp.pdf"}, "", []string{"compare -o ", "cmp.pdf: use text, json, md or html"}, 2},
		{"unknown rank", []string{"--by", "vibes"}, "", []string{"--by \"vibes\": rank by rate or score"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"compare", a, b, "--db", db}
			for _, x := range tc.args {
				if strings.HasSuffix(x, ".md") || strings.HasSuffix(x, ".out") || strings.HasSuffix(x, ".txt") || strings.HasSuffix(x, ".pdf") {
					x = filepath.Join(dir, x)
				}
				args = append(args, x)
			}
			code, out, stderr := inproc(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			got := out + stderr
			if tc.file != "" {
				raw, err := os.ReadFile(filepath.Join(dir, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				got = string(raw)
				if out != "" {
					t.Errorf("-o given, yet stdout has %d bytes", len(out))
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output does not hold %q:\n%.600s", w, got)
				}
			}
		})
	}
}

func TestCompareNeedsARun(t *testing.T) {
	t.Parallel()
	code, _, stderr := inproc(t, "compare", "--db", filepath.Join(t.TempDir(), "x.db"))
	if code != 2 || !strings.Contains(stderr, "name one run") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
