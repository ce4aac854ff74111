package cli

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"pitwall/runner/ledger"
)

// severityBattery is a promptfoo battery whose tests carry a category and
// a severity, the critical one second, with an assertion pitwall cannot
// run (python): its warning. No reply can pass either test.
const severityBattery = `
prompts:
  - "{{question}}"
tests:
  - description: Sum
    vars:
      test_id: sum
      question: What is 2 + 2?
      category: math
      severity: info
    assert:
      - type: contains
        value: "4"
      - type: not-contains
        value: "4"
  - description: Capital of France
    vars:
      test_id: capital
      question: What is the capital of France?
      category: facts
      severity: critical
    assert:
      - type: icontains
        value: paris
      - type: not-icontains
        value: paris
      - type: python
        value: len(output) < 100
`

// severityRun runs the severity battery on two of the demo's simulated
// models, checks only, into a ledger of its own, and returns the ledger,
// the run's id and the run's exit code.
func severityRun(t *testing.T) (db, id string, code int) {
	t.Helper()
	dir := t.TempDir()
	battery := filepath.Join(dir, "battery.yaml")
	if err := os.WriteFile(battery, []byte(severityBattery), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(demoPath(t))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), `battery = "demo-battery.toml"`, "battery = "+strconv.Quote(battery), 1)
	cfg := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "ledger.db")
	code, _, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db,
		"--judge", "none", "--models", "qwen3-8b,phi-4-mini")
	if !strings.Contains(stderr, `"python"`) {
		t.Fatalf("run did not print the battery's warning (exit %d):\n%s", code, stderr)
	}
	code2, out, _ := inproc(t, "runs", "--db", db, "-n", "1", "--json")
	m := regexp.MustCompile(`"id": "([^"]+)"`).FindStringSubmatch(out)
	if code2 != 0 || m == nil {
		t.Fatalf("cannot find the run's id: exit %d\n%s", code2, out)
	}
	return db, m[1], code
}

// A run pitwall runs keeps its tests' categories and severities and the
// battery's warnings in its record: every export format, compare and show
// carry them.
func TestARunsRecordCarriesCategoriesSeveritiesAndWarnings(t *testing.T) {
	t.Parallel()
	db, id, code := severityRun(t)
	if code != 1 {
		t.Fatalf("run exited %d, want 1 (no reply can pass)", code)
	}

	_, out, stderr := inproc(t, "export", id, "--db", db, "--format", "json")
	var x struct {
		Run struct {
			ExitCode *int `json:"exit_code"`
		} `json:"run"`
		Categories map[string]string `json:"categories"`
		Severities map[string]string `json:"severities"`
		Warnings   []string          `json:"warnings"`
		Cells      []struct {
			Test, Category, Severity string
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("export json: %v\n%s%s", err, out, stderr)
	}
	if x.Categories["capital"] != "facts" || x.Categories["sum"] != "math" {
		t.Errorf("json categories %v: want capital facts, sum math", x.Categories)
	}
	if x.Severities["capital"] != "critical" || x.Severities["sum"] != "info" {
		t.Errorf("json severities %v: want capital critical, sum info", x.Severities)
	}
	if len(x.Warnings) == 0 || !strings.Contains(strings.Join(x.Warnings, "\n"), `"python"`) {
		t.Errorf("json warnings %q: want the python assertion's", x.Warnings)
	}
	if x.Run.ExitCode == nil || *x.Run.ExitCode != code {
		t.Errorf("json run.exit_code %v, want %d", x.Run.ExitCode, code)
	}
	for _, c := range x.Cells {
		if c.Category != x.Categories[c.Test] || c.Severity != x.Severities[c.Test] {
			t.Errorf("cell of %s: category %q severity %q", c.Test, c.Category, c.Severity)
		}
	}

	_, out, _ = inproc(t, "export", id, "--db", db, "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("export csv: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if _, ok := col["severity"]; !ok {
		t.Fatalf("csv header %v has no severity column", rows[0])
	}
	for _, r := range rows[1:] {
		if r[col["category"]] != x.Categories[r[col["test"]]] || r[col["severity"]] != x.Severities[r[col["test"]]] {
			t.Errorf("csv row of %s: category %q severity %q", r[col["test"]], r[col["category"]], r[col["severity"]])
		}
	}

	_, md, _ := inproc(t, "export", id, "--db", db, "--format", "md")
	for _, want := range []string{"| test | category | severity |", "| `capital` | facts | critical |", "**Battery warnings:**", `"python"`,
		"| test | severity | model |", "exit 1"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	_, page, _ := inproc(t, "export", id, "--db", db, "--format", "html")
	for _, want := range []string{`id="f-category"`, `id="f-severity"`, `id="warnings-section"`, `"severities":{`, `"warnings":[`} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %q", want)
		}
	}

	_, cmp, _ := inproc(t, "compare", id, "--db", db)
	if !strings.Contains(cmp, "by category") || !strings.Contains(cmp, "facts") || !strings.Contains(cmp, "math") {
		t.Errorf("compare has no by-category table:\n%s", cmp)
	}

	show, shown, _ := inproc(t, "show", id, "--headless", "--db", db)
	if show != code {
		t.Errorf("show exited %d, the run %d", show, code)
	}
	notPassed := shown[strings.Index(shown, "not passed"):]
	crit, info := strings.Index(notPassed, "critical  capital  facts"), strings.Index(notPassed, "info      sum      math")
	if crit < 0 || info < crit {
		t.Errorf("show does not list the failed tests, critical first, with severity and category:\n%s", shown)
	}
	if !strings.Contains(shown, "battery warnings") || !strings.Contains(shown, `"python"`) {
		t.Errorf("show does not carry the battery's warnings:\n%s", shown)
	}
}

// A run recorded before the record kept categories (its tests as ids only)
// still loads, shows and exports, with none.
func TestARunRecordedWithoutCategoriesStillLoads(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "ledger.db")
	led, err := ledger.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Minute)
	id := ledger.NewRunID(started)
	if err := led.CreateRun(ledger.RunRow{ID: id, Name: "old", Status: "completed", ScoringMode: "deterministic",
		ConfigJSON: `{"name":"old","tests":["t"]}`, Models: []string{"m"}, Tests: []string{"t"}, Repeat: 1,
		StartedAt: started, EndedAt: started.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := led.PutCell(ledger.CellRow{RunID: id, Model: "m", Test: "t", Status: "failed", Output: "no"}); err != nil {
		t.Fatal(err)
	}
	if err := led.Close(); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "csv", "md", "html"} {
		if code, _, stderr := inproc(t, "export", id, "--db", db, "--format", format); code != 0 {
			t.Errorf("export --format %s: exit %d: %s", format, code, stderr)
		}
	}
	code, out, stderr := inproc(t, "show", id, "--headless", "--db", db)
	if code != 1 || !strings.Contains(out, "not passed") || strings.Contains(out, "battery warnings") {
		t.Errorf("show: exit %d (want 1, computed: nothing recorded), stderr %q:\n%s", code, stderr, out)
	}
	code, out, _ = inproc(t, "runs", "--db", db, "--json")
	var runs []runSummary
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 || runs[0].ExitCode == nil || *runs[0].ExitCode != 1 {
		t.Errorf("runs of a run with no recorded exit code: exit %d\n%s; want the computed 1", code, out)
	}
}

// `runs`, `runs --json`, `show` and the export report the exit code the
// process returned: 0 when a --fail-under gate passed, though cells failed.
func TestRunsReportsTheExitCodeTheProcessReturned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := demoConfig(t, dir, 7)
	db := filepath.Join(dir, "ledger.db")
	code, _, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db, "--fail-under", "0.1")
	if code != 0 {
		t.Fatalf("run under --fail-under 0.1 exited %d, want 0:\n%s", code, stderr)
	}
	code, out, _ := inproc(t, "runs", "--db", db, "--json")
	var runs []runSummary
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 {
		t.Fatalf("runs: exit %d\n%s", code, out)
	}
	if r := runs[0]; r.ExitCode == nil || *r.ExitCode != 0 || r.Fail+r.Error == 0 {
		t.Errorf("runs --json: exit code %v with %d FAIL and %d ERR; want 0, as the gated run exited", r.ExitCode, r.Fail, r.Error)
	}
	_, table, _ := inproc(t, "runs", "--db", db)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2 || !strings.HasSuffix(strings.TrimSpace(lines[1]), " 0") {
		t.Errorf("runs: want the run's line to end in exit 0:\n%s", table)
	}
	show, shown, _ := inproc(t, "show", "last", "--headless", "--db", db)
	if show != 0 || !regexp.MustCompile(`(?m)^exit\s+0$`).MatchString(shown) {
		t.Errorf("show exited %d; want 0 and the summary saying exit 0:\n%s", show, shown)
	}
	// Another judge's verdicts earn their own code: nothing was recorded for them.
	if show, _, _ := inproc(t, "show", "last", "--headless", "--db", db, "--judge", "small"); show != 1 {
		t.Errorf("show --judge small exited %d, want 1 (the demo fails cells under every judge)", show)
	}
}
