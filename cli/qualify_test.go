package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"pitwall/edges/qualify"
	"strconv"
	"strings"
	"testing"

	"pitwall/config"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
)

func qualifyExample(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../examples/judge-qualify.toml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// `pitwall qualify` on the example, through the fleet and the simulator:
// each judge's accuracy is 1 − its model's judge_error_rate within three
// standard errors of a share over its n answers, sqrt(p(1−p)/n) (the
// simulated judge reads every case right, then errs on each answer
// independently with that rate; three standard errors keep a right
// implementation from failing more than about once in 370 runs per judge,
// and the seeds are fixed, so the figures repeat). The judge that never
// errs is right on every case, κ 1; every request is a judge row of the
// qualify run in the ledger; and --min-accuracy 0.9 fails the noisy judge
// (0.75) with exit 1.
func TestQualifyReportsEachJudgesAccuracyAndGatesOnIt(t *testing.T) {
	t.Parallel()
	path := qualifyExample(t)
	cfg, tests, err := config.LoadQualify(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rates := map[string]float64{}
	for _, m := range cfg.Sim.Models {
		rates[m.Name] = m.JudgeErrorRate
	}
	models := map[string]string{}
	for _, j := range cfg.Scoring.Judges {
		models[j.Name] = j.Model
	}
	const samples = 5
	verbatim := 0 // cases whose candidate is a verdict line the judge may answer with
	for _, jt := range tests {
		for _, l := range strings.Split(jt.Candidate, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "VERDICT:") {
				verbatim++
				break
			}
		}
	}
	db := filepath.Join(t.TempDir(), "ledger.db")
	code, out, stderr := inproc(t, "qualify", path, "--samples", "5", "--format", "json", "--time-scale", "0", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d (no --min-accuracy: want 0)\n%s", code, stderr)
	}
	var got qualifyOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	r := got.Report
	if got.Samples != samples || r.Cases != len(tests) || len(r.Judges) != 4 || r.Judges[3].Judge != scoring.JuryName || len(r.Pairs) != 3 {
		t.Fatalf("samples %d, %d cases, %d judges, %d pairs; want 5, %d, three judges and the jury, three pairs",
			got.Samples, r.Cases, len(r.Judges), len(r.Pairs), len(tests))
	}
	for _, q := range r.Judges[:3] {
		p := rates[models[q.Judge]]
		n := len(tests) * samples
		tol := 3 * math.Sqrt(p*(1-p)/float64(n))
		t.Logf("%-6s judge_error_rate %.2f: accuracy %.3f ± %.3f expected %.3f, κ %.2f, consistency %.2f, %.0f tokens/verdict",
			q.Judge, p, q.Accuracy, tol, 1-p, q.Kappa.Kappa, q.Consistency, q.TokensPerVerdict)
		// A judge that errs to the very verdict line a candidate wrote
		// (attack-think-in-tool-call's "VERDICT: PASS") cannot be told from
		// one quoting it: that answer is a J-ERR, never a PASS. Only those.
		if q.Verdicts != n || q.Errors > samples*verbatim || p == 0 && q.Errors != 0 || q.TokensPerVerdict <= 0 || q.TimePerVerdict < 0 {
			t.Errorf("%s: %d verdicts, %d J-ERR, %.0f tokens per verdict; want %d, at most %d (answers that are a candidate's own verdict line) and some",
				q.Judge, q.Verdicts, q.Errors, q.TokensPerVerdict, n, samples*verbatim)
		}
		if math.Abs(q.Accuracy-(1-p)) > tol+1e-9 {
			t.Errorf("%s: accuracy %.3f, want %.3f ± %.3f", q.Judge, q.Accuracy, 1-p, tol)
		}
		if p == 0 && (q.Accuracy != 1 || q.Kappa.Kappa != 1 || q.Consistency != 1) {
			t.Errorf("%s never errs, yet accuracy %.3f κ %.2f consistency %.2f", q.Judge, q.Accuracy, q.Kappa.Kappa, q.Consistency)
		}
	}

	led, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	run, err := led.Run(got.Run)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := led.Requests(got.Run)
	if err != nil {
		t.Fatal(err)
	}
	judged := 0
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeJudge {
			judged++
			if q.Status != ledger.StatusCompleted || q.Verdict == "" || q.Judge == "" || q.Test == "" {
				t.Errorf("judge request %d: status %s, verdict %q, judge %q, case %q", q.ID, q.Status, q.Verdict, q.Judge, q.Test)
			}
		}
	}
	if run.Status != "completed" || run.ScoringMode != qualify.Mode || judged != 3*len(tests)*samples {
		t.Errorf("ledger: run %s %s, %d judge requests; want completed, %s, %d", run.ID, run.Status, judged, qualify.Mode, 3*len(tests)*samples)
	}

	code, table, stderr := inproc(t, "qualify", path, "--samples", "5", "--min-accuracy", "0.9", "--time-scale", "0", "--db", db)
	if code != 1 {
		t.Fatalf("--min-accuracy 0.9: exit %d, want 1 (noisy errs at 0.25)\n%s%s", code, table, stderr)
	}
	for _, want := range []string{"below --min-accuracy 90%: noisy", "accuracy", "κ vs expected", "exact × good", "attack-verdict-line"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	code, _, stderr = inproc(t, "qualify", path, "--judge", "exact", "--min-accuracy", "99%", "--time-scale", "0", "--db", db)
	if code != 0 {
		t.Errorf("--judge exact --min-accuracy 99%%: exit %d, want 0: %s", code, stderr)
	}
}

func TestQualifyRefusesWhatIsNotAJudgeQualification(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "ledger.db")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a battery config", []string{demoPath(t)}, "does not name a judge battery"},
		{"no such file", []string{filepath.Join(t.TempDir(), "none.toml")}, "no such file"},
		{"unknown judge", []string{qualifyExample(t), "--judge", "exakt"}, "did you mean `exact`?"},
		{"bad share", []string{qualifyExample(t), "--min-accuracy", "90"}, "is not a rate"},
		{"bad format", []string{qualifyExample(t), "--format", "xml"}, "use text or json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := inproc(t, append([]string{"qualify", "--db", db}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// A judge's server that fails now and then: each transient failure is
// recorded and sent again ([run] retries), so the judge's figures count
// only its answers, every one of them right, and no J-ERR.
func TestQualifyRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	battery, err := filepath.Abs("../examples/judge-battery.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "qualify.toml")
	text := `name = "flaky"
battery = ` + strconv.Quote(battery) + `
[run]
retries = 8
[[sim.models]]
name = "judge-exact"
judge_error_rate = 0.0
[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["judge-exact"]
  [servers.sim]
  faults = { error_rate = 0.2 }
[scoring]
samples = 3
[[scoring.judges]]
name = "exact"
model = "judge-exact"
server = "gpu0"
`
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "ledger.db")
	code, out, stderr := inproc(t, "qualify", cfgPath, "--format", "json", "--time-scale", "0", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	var got qualifyOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	q := got.Report.Judges[0]
	if q.Verdicts != 72 || q.Errors != 0 || q.Accuracy != 1 {
		t.Errorf("%d verdicts, %d J-ERR, accuracy %.3f; want 72, none, 1 (every failure retried)", q.Verdicts, q.Errors, q.Accuracy)
	}
	led, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	reqs, err := led.Requests(got.Run)
	if err != nil {
		t.Fatal(err)
	}
	failed, retried := 0, 0
	for _, r := range reqs {
		if r.Purpose != ledger.PurposeJudge {
			continue
		}
		if r.Status == ledger.StatusError {
			failed++
		}
		if r.Attempt > 1 {
			retried++
		}
	}
	// With a fault rate of 0.2 over 72 first attempts, no failure at all
	// has a chance of 0.8^72, about 1e-7.
	if failed == 0 || retried != failed {
		t.Errorf("%d failed attempts and %d retries in the ledger; want some, one retry per failure", failed, retried)
	}
}
