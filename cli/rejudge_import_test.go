package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// judgeSim is a simulated fleet of one judge, served by `pitwall sim`: it
// offers none of the imported run's models.
const judgeSim = `
name    = "judges"
battery = %q
models  = ["judge-a"]

[sim]
time_scale = 0.0

[[sim.models]]
name         = "judge-a"
reply_tokens = 30

[[servers]]
name   = "judgebox"
kind   = "sim"
slots  = 4
models = ["judge-a"]
`

// judgeOverHTTP is the config a user gives rejudge: their judge and the
// server it runs on. Its battery and models are not the run's, and are not
// used.
const judgeOverHTTP = `
name    = "my judges"
battery = %q
models  = ["judge-a"]

[run]
timeout = "60s"
retries = 0

[[servers]]
name = "judgebox"
kind = "lmstudio"
url  = %q

[scoring]
mode    = "judge"
samples = 1

[[scoring.judges]]
name   = "a"
model  = "judge-a"
server = "judgebox"
`

func TestRejudgeImportedRunWithAnotherConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	battery, export := importFixture(t, dir)
	db := filepath.Join(dir, "ledger", "ledger.db")
	code, out, errOut := pitwall(t, dir, nil, "import", export, "--battery", battery, "--db", db)
	if code != 0 {
		t.Fatalf("import exited %d: %s", code, errOut)
	}
	m := runIDPattern.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no run id in %q", out)
	}
	id := m[1]
	imported := exportRun(t, dir, db, id)
	completed := 0
	for _, c := range imported.Cells {
		if c.Status == "completed" {
			completed++
		}
		if len(c.Judgments) > 0 {
			t.Fatalf("%s × %s has a verdict before any re-judge", c.Model, c.Test)
		}
	}
	if completed == 0 {
		t.Fatal("the fixture has no completed cell to judge")
	}

	// Without --config there is nothing to judge with: a usage error.
	code, _, errOut = pitwall(t, dir, nil, "rejudge", id, "--headless", "--db", db)
	if code != 2 || !strings.Contains(errOut, "--config") {
		t.Errorf("rejudge with no --config: exit %d, %q; want 2 and a hint at --config", code, errOut)
	}

	fleet := startSimFleet(t, dir, writeFile(t, dir, "judge-sim.toml", fmt.Sprintf(judgeSim, battery)), "0")
	judges := writeFile(t, dir, "judge.toml", fmt.Sprintf(judgeOverHTTP, battery, fleet.urls["judgebox"]))
	before := fleet.requests(t)
	code, stdout, errOut := pitwall(t, dir, nil, "rejudge", id, "--config", judges, "--headless", "--db", db)
	after := fleet.requests(t)
	if code != 0 && code != 1 {
		t.Fatalf("rejudge exited %d:\n%s", code, errOut)
	}
	var others []string
	for model := range after {
		if model != "judge-a" && after[model] != before[model] {
			others = append(others, model)
		}
	}
	if len(others) > 0 {
		t.Errorf("the simulator received requests for %v, want judge requests only", others)
	}
	if n := sent(before, after, "judge-a"); n < 1 || n > int64(completed) {
		t.Errorf("the judge received %d requests for %d completed cells", n, completed)
	}
	if !strings.Contains(stdout, "(judge a)") {
		t.Errorf("the summary is not judge a's:\n%s", stdout)
	}

	// The verdicts are the run's now: export and show read them with no
	// --judge.
	got := exportRun(t, dir, db, id)
	judged := 0
	for _, c := range got.Cells {
		j, ok := c.Judgments["a"]
		switch {
		case c.Status != "completed":
			if ok {
				t.Errorf("%s × %s (%s) was judged", c.Model, c.Test, c.Status)
			}
		case !ok || j.Verdict == "":
			t.Errorf("%s × %s has no verdict of judge a: %+v", c.Model, c.Test, c.Judgments)
		case c.Verdict == nil || *c.Verdict != j.Verdict:
			t.Errorf("%s × %s: the verdict in view is %v, judge a's %s", c.Model, c.Test, c.Verdict, j.Verdict)
		default:
			judged++
		}
	}
	if judged != completed {
		t.Errorf("%d of %d completed cells carry judge a's verdict in the export", judged, completed)
	}
	for _, q := range got.Requests {
		if q.Purpose == "inference" {
			t.Errorf("the run has an inference request: %+v", q)
		}
	}
	code, shown, errOut := pitwall(t, dir, nil, "show", id, "--headless", "--db", db)
	if code != 0 && code != 1 || !strings.Contains(shown, "(judge a)") {
		t.Errorf("show exited %d and does not show judge a's verdicts:\n%s%s", code, shown, errOut)
	}
}
