package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/runner/state"
)

// sameAnswers is a battery whose every right answer is exact: the models
// that get it right all reply the same text, so their judge inputs match.
func sameAnswers(t *testing.T, tests, models int, faults string) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := range tests {
		fmt.Fprintf(&b, "[[tests]]\nid = \"t%d\"\ncategory = \"reasoning\"\nuser = \"What is %d plus %d? Only the number.\"\nreference = \"%d\"\n  [[tests.checks]]\n  type = \"equals\"\n  value = \"%d\"\n\n", i, i, i, 2*i, 2*i)
	}
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var names, sims []string
	for m := range models {
		names = append(names, fmt.Sprintf("%q", fmt.Sprintf("m%02d", m)))
		sims = append(sims, fmt.Sprintf("[[sim.models]]\nname = \"m%02d\"\nskill = 1.0\n", m))
	}
	conf := fmt.Sprintf(`name = "paid-once"
battery = "battery.toml"
models = [%s]
db = %q
[run]
timeout = "30s"
retries = 3
%s
[[sim.models]]
name = "judge"
judge_error_rate = 0.0
[[servers]]
name = "gpu0"
kind = "sim"
slots = 16
models = [%s]
%s
[[servers]]
name = "judges"
kind = "sim"
slots = 8
models = ["judge"]
[[scoring.judges]]
name = "j"
model = "judge"
server = "judges"
`, strings.Join(names, ", "), filepath.Join(dir, "ledger.db"), strings.Join(sims, "\n"), strings.Join(names, ", "), faults)
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEachDistinctJudgeInputIsSentOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		faults string
	}{
		{"no faults", ""},
		{"inference faults", "  [servers.sim.faults]\n  error_rate = 0.1\n  cut_rate = 0.05\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const tests, models = 50, 20 // 1,000 cells
			h := newHarness(t, loadConfig(t, sameAnswers(t, tests, models, tc.faults)), true)
			b := h.finish(t)
			if b.Counts.Cells() != tests*models {
				t.Fatalf("%d cells", b.Counts.Cells())
			}
			// Each test's right answer is one text: one judge input per test.
			inputs := map[string]bool{}
			for _, row := range b.Rows {
				for _, c := range row.Cells {
					if c.Status == state.Completed {
						inputs[c.Test+"\x00"+c.Said().Output] = true
					}
				}
			}
			sent := h.sims.Server("judges").Stats().Requests
			if b.Counts.Completed < tests*models/2 || len(inputs) == 0 {
				t.Fatalf("too few completed cells to tell: %+v", b.Counts)
			}
			if sent != int64(len(inputs)) {
				t.Errorf("the judge server got %d requests for %d distinct judge inputs (%d completed cells)", sent, len(inputs), b.Counts.Completed)
			}
			if b.Counts.Judged != b.Counts.Completed {
				t.Errorf("%d of %d completed cells judged", b.Counts.Judged, b.Counts.Completed)
			}
		})
	}
}

func TestReuseSendsNoInferenceTheLedgerHas(t *testing.T) {
	t.Parallel()
	path := sameAnswers(t, 6, 3, "")
	first := newHarness(t, loadConfig(t, path), true)
	b1 := first.finish(t)
	sent1 := first.sims.Server("gpu0").Stats().Requests
	first.run.Close()

	plain := newHarness(t, loadConfig(t, path), true)
	plain.finish(t)
	if sent := plain.sims.Server("gpu0").Stats().Requests; sent != sent1 {
		t.Errorf("without reuse the second run sent %d inference requests, the first %d", sent, sent1)
	}
	plain.run.Close()

	cfg := loadConfig(t, path)
	cfg.Run.ReuseInference = true
	reused := newHarness(t, cfg, true)
	b3 := reused.finish(t)
	if sent := reused.sims.Server("gpu0").Stats().Requests; sent != 0 {
		t.Errorf("with reuse the run sent %d inference requests, want 0", sent)
	}
	for ti, row := range b3.Rows {
		for i, c := range row.Cells {
			want := b1.Rows[ti].Cells[i]
			if c.Status != want.Status || c.Said().Output != want.Said().Output {
				t.Errorf("%s × %s: reused %s %q, first run %s %q", c.Model, c.Test, c.Status, c.Said().Output, want.Status, want.Said().Output)
			}
			if c.Status == state.Completed && !c.Cached() {
				t.Errorf("%s × %s: reused, but the cell is not marked cached (server %q)", c.Model, c.Test, c.Server)
			}
		}
	}
	x := reused.export(t)
	for _, q := range x.Requests {
		if q.Purpose == "inference" && q.Server != "(cache)" {
			t.Errorf("request %d of a reused run names server %q, want (cache)", q.ID, q.Server)
		}
	}
}
