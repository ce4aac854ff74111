package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"pitwall/config"
	"pitwall/runner"
	"pitwall/runner/state"
)

// heldJudgeRun starts a real run whose replies come at once and whose
// judge takes a minute to answer: every ❌ of the checks is in while every
// ✓ waits for its verdict, the moment a rate of what is decided reads 0%.
func heldJudgeRun(t *testing.T) *runner.Run {
	t.Helper()
	dir := t.TempDir()
	battery := `
[[tests]]
id = "capital"
user = "Capital of France? One word."
reference = "Paris"
  [[tests.checks]]
  type = "icontains"
  value = "Paris"

[[tests]]
id = "sum"
user = "What is 2 plus 2? Only the number."
reference = "4"
  [[tests.checks]]
  type = "contains"
  value = "4"
`
	conf := `name = "held"
battery = "battery.toml"
models = ["good", "poor"]
db = '` + filepath.Join(dir, "ledger.db") + `'
[run]
timeout = "120s"
repeat = 4
[sim]
time_scale = 1
[[sim.models]]
name = "good"
skill = 0.95
ttft = "5ms"
tokens_per_sec = 5000
[[sim.models]]
name = "poor"
skill = 0.4
ttft = "5ms"
tokens_per_sec = 5000
[[sim.models]]
name = "slowjudge"
ttft = "60s"
[[servers]]
name = "gpu0"
kind = "sim"
slots = 8
models = ["good", "poor", "slowjudge"]
[scoring]
mode = "judge"
[[scoring.judges]]
name = "slow"
model = "slowjudge"
server = "gpu0"
`
	for name, body := range map[string]string{"battery.toml": battery, "pitwall.toml": conf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "pitwall.toml"), config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	run, _, _ := startOnSim(t, cfg)
	return run
}

// zeroRate finds a ranking row that gives a model 0% (alone, not as the
// low end of a range).
var zeroRate = regexp.MustCompile(`(?m)^ \S+\s+(good|poor)\s+0%\s`)

// The compare view of a run whose judge is still at work ranks by what is
// known: no model reads 0% while its ✓ wait for their verdicts, and the
// view says it is provisional.
func TestCompareViewMidRunShowsNoModelAtZeroWhileCellsArePending(t *testing.T) {
	t.Parallel()
	run := heldJudgeRun(t)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	w := watch(newModel(run.Snapshots(), runCtrl{run}, Options{}, done))
	tm := teatest.NewTestModel(t, w, teatest.WithInitialTermSize(140, 40))

	// Inference over, the judge held: a poor model's ❌ are in.
	w.waitFor(t, "inference over with a failure in", func(string) bool {
		b := run.Latest()
		if b == nil {
			return false // nothing published yet
		}
		n := state.TallyRows(b.Rows, b.Plan.InView)
		return n.Done() == n.Cells() && n.Failed > 0 && n.Judged == 0
	})
	tm.Type("c")
	w.waitText(t, "Ranking", "judge slow", "provisional", "pending")
	w.mu.Lock()
	screen := w.screen
	w.mu.Unlock()
	if zeroRate.MatchString(screen) {
		t.Errorf("a model reads 0%% while its cells wait for the judge:\n%s", screen)
	}
	for _, m := range []string{"good", "poor"} {
		if !regexp.MustCompile(`(?m)^ \S+\s+` + m + `\s`).MatchString(screen) {
			t.Errorf("the ranking has no row for %s:\n%s", m, screen)
		}
	}
	if b := run.Latest(); b.Final {
		t.Fatalf("the run ended before the view was read: the judge was not held")
	}
	run.Stop()
	tm.Send(keyMsg("esc"))
	tm.Type("q")
	tm.Type("y")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
