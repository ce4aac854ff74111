package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run whose every server goes down says so headless, and says what waits
// on them within 2 s of the servers going down; then, after max_wait, the
// waiting cells end ⚠️ and the run ends by itself.
func TestHeadlessSaysWhatWaitsWhenEveryServerIsDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var battery strings.Builder
	for i := range 8 {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%d\"\nuser = \"Say %d.\"\nreference = \"%d\"\n\n", i, i, i)
	}
	conf := `name = "all-down"
battery = "battery.toml"
models = ["m"]
[run]
timeout = "20s"
retries = 1
max_wait = "2s"
[sim]
time_scale = 0.01
[[sim.models]]
name = "m"
tokens_per_sec = 20
[[servers]]
name = "gpu0"
kind = "sim"
slots = 1
models = ["m"]
  [servers.sim.faults]
  crash_after = 2
`
	for name, body := range map[string]string{"battery.toml": battery.String(), "pitwall.toml": conf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "run", "pitwall.toml", "--headless", "--db", filepath.Join(dir, "ledger.db"))
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var down, waiting time.Time
	var lines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		l := sc.Text()
		lines = append(lines, l)
		switch {
		case down.IsZero() && strings.HasPrefix(l, "server gpu0 down"):
			down = time.Now()
		case waiting.IsZero() && strings.HasPrefix(l, "waiting on gpu0 down"):
			waiting = time.Now()
		}
	}
	err = cmd.Wait()
	took := time.Since(start)
	all := strings.Join(lines, "\n")
	if down.IsZero() || waiting.IsZero() {
		t.Fatalf("no down line or no waiting line in the headless output:\n%s", all)
	}
	if d := waiting.Sub(down); d > 2*time.Second {
		t.Errorf("the waiting line came %s after the server went down, want within 2s", d)
	}
	if !strings.Contains(all, "waiting") || !strings.Contains(all, "max_wait") {
		t.Errorf("the cells that gave up do not say why:\n%s", all)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (cells ended ⚠️); took %s:\n%s", code, took, all)
	}
	if took > 30*time.Second {
		t.Errorf("the run took %s to end by itself", took)
	}
}

func TestRunOnABatterySaysItIsABattery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "battery.toml", "[[tests]]\nid = \"a\"\nuser = \"hi\"\n")
	code, _, stderr := pitwall(t, dir, nil, "run", "battery.toml", "--headless")
	if code != 2 || !strings.Contains(stderr, "battery.toml is a battery, not a config") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, want 2 and one line saying it is a battery:\n%s", code, stderr)
	}
}
