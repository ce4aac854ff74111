package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// `pitwall qualify` on a promptfoo judge-competence config: the judges
// grade its fixed outputs (tool calls read from JSON, reply text) against
// its expected verdicts. The simulated judge that never errs agrees with
// every one, which it can only do if each output reached it as written;
// the noisy one is right on 1 − 0.25 of its answers within three standard
// errors (as in TestQualifyReportsEachJudgesAccuracyAndGatesOnIt).
func TestQualifyOnAPromptfooJudgeBattery(t *testing.T) {
	t.Parallel()
	battery, err := filepath.Abs("../config/testdata/batteries/promptfoo_judge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "qualify.toml")
	text := `name = "promptfoo-judges"
battery = ` + strconv.Quote(battery) + `
[run]
seed = 42
[[sim.models]]
name = "judge-exact"
judge_error_rate = 0.0
[[sim.models]]
name = "judge-noisy"
judge_error_rate = 0.25
[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["judge-exact", "judge-noisy"]
[scoring]
mode = "jury"
samples = 5
[[scoring.judges]]
name = "exact"
model = "judge-exact"
server = "gpu0"
[[scoring.judges]]
name = "noisy"
model = "judge-noisy"
server = "gpu0"
`
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := inproc(t, "qualify", cfgPath, "--format", "json", "--time-scale", "0", "--db", filepath.Join(dir, "ledger.db"))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(stderr, "a test expecting PARTIAL is left out") {
		t.Errorf("stderr does not warn of the PARTIAL test left out:\n%s", stderr)
	}
	var got qualifyOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	r := got.Report
	const cases, samples = 9, 5
	if r.Cases != cases || len(r.Judges) < 2 {
		t.Fatalf("%d cases, %d judges; want %d cases and both judges", r.Cases, len(r.Judges), cases)
	}
	for _, q := range r.Judges[:2] {
		p := map[string]float64{"exact": 0, "noisy": 0.25}[q.Judge]
		n := cases * samples
		tol := 3 * math.Sqrt(p*(1-p)/float64(n))
		t.Logf("%s: accuracy %.3f (want %.3f ± %.3f), κ %.2f", q.Judge, q.Accuracy, 1-p, tol, q.Kappa.Kappa)
		if q.Verdicts != n || q.Errors != 0 || math.Abs(q.Accuracy-(1-p)) > tol+1e-9 {
			t.Errorf("%s: %d verdicts, %d J-ERR, accuracy %.3f; want %d, none, %.3f ± %.3f", q.Judge, q.Verdicts, q.Errors, q.Accuracy, n, 1-p, tol)
		}
		if p == 0 && (q.Accuracy != 1 || q.Kappa.Kappa != 1) {
			t.Errorf("%s never errs, yet accuracy %.3f κ %.2f: an output did not reach it as the battery wrote it", q.Judge, q.Accuracy, q.Kappa.Kappa)
		}
	}
}
