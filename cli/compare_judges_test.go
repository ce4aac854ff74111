package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Comparing runs judged by different judges warns: their rates measure
// the judges as much as the models.
func TestCompareWarnsWhenRunsWereJudgedByDifferentJudges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	large := demoConfig(t, dir, 42)
	raw, err := os.ReadFile(large)
	if err != nil {
		t.Fatal(err)
	}
	// The first judge is the one in view: name it "small".
	swapped := strings.NewReplacer(`name   = "large"`, `name   = "small"`, `name   = "small"`, `name   = "large"`).Replace(string(raw))
	small := filepath.Join(dir, "small.toml")
	if err := os.WriteFile(small, []byte(swapped), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cfg := range []string{large, small} {
		if code, _, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db); code != 0 && code != 1 {
			t.Fatalf("demo run exited %d:\n%s", code, stderr)
		}
		_, out, _ := inproc(t, "runs", "--db", db, "-n", "1", "--json")
		i := strings.Index(out, `"id": "`)
		if i < 0 {
			t.Fatalf("no run id in:\n%s", out)
		}
		ids = append(ids, out[i+7:i+7+strings.Index(out[i+7:], `"`)])
	}
	code, out, _ := inproc(t, "compare", ids[0], ids[1], "--db", db)
	if code != 0 || !strings.Contains(out, "warning: runs "+ids[0]+" and "+ids[1]+" were judged differently (judge large vs judge small)") {
		t.Errorf("compare of runs judged by large and small: exit %d\n%s", code, out)
	}
	_, _, stderr := inproc(t, "compare", ids[0], ids[1], "--db", db, "--format", "json")
	if !strings.Contains(stderr, "were judged differently") {
		t.Errorf("compare --format json does not warn on stderr: %q", stderr)
	}
	if code, out, _ := inproc(t, "compare", ids[0], ids[0], "--db", db); code != 0 || strings.Contains(out, "judged differently") {
		t.Errorf("a run compared with itself warns: exit %d\n%s", code, out)
	}
}
