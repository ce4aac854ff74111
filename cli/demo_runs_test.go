package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// inproc runs a command in this process (so -race sees it) and returns its
// exit code, stdout and stderr.
func inproc(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// demoConfig writes a copy of the demo config with its own seed into dir,
// its battery named by absolute path, and returns its path.
func demoConfig(t *testing.T, dir string, seed int) string {
	t.Helper()
	raw, err := os.ReadFile(demoPath(t))
	if err != nil {
		t.Fatal(err)
	}
	battery, err := filepath.Abs("../examples/demo-battery.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^seed\s*=.*$`).ReplaceAllString(string(raw), "seed = "+strconv.Itoa(seed))
	text = strings.Replace(text, `battery = "demo-battery.toml"`, "battery = "+strconv.Quote(battery), 1)
	if !strings.Contains(text, "seed = "+strconv.Itoa(seed)) || !strings.Contains(text, battery) {
		t.Fatal("the demo config no longer has the seed or battery line this helper rewrites")
	}
	p := filepath.Join(dir, "demo-"+strconv.Itoa(seed)+".toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// demoRuns is a ledger holding one instant demo run per seed, made once
// for the tests that read runs back (compare, export, runs, gates).
var demoRuns struct {
	sync.Mutex
	db  string
	ids map[int]string
}

// demoRun runs the demo with seed into the shared ledger (once per seed)
// and returns the ledger's path and the run's id.
func demoRun(t *testing.T, seed int) (db, id string) {
	t.Helper()
	demoRuns.Lock()
	defer demoRuns.Unlock()
	if demoRuns.db == "" {
		// Beside the test binary's pitwall: TestMain removes the folder.
		dir, err := os.MkdirTemp(filepath.Dir(bin), "demo-runs")
		if err != nil {
			t.Fatal(err)
		}
		demoRuns.db = filepath.Join(dir, "ledger.db")
		demoRuns.ids = map[int]string{}
	}
	if id := demoRuns.ids[seed]; id != "" {
		return demoRuns.db, id
	}
	cfg := demoConfig(t, filepath.Dir(demoRuns.db), seed)
	code, _, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", demoRuns.db)
	if code != 0 && code != 1 {
		t.Fatalf("demo run (seed %d) exited %d:\n%s", seed, code, stderr)
	}
	// The newest run of the ledger is the one just made: the lock keeps
	// other seeds out meanwhile.
	code, out, _ := inproc(t, "runs", "--db", demoRuns.db, "-n", "1", "--json")
	m := regexp.MustCompile(`"id": "([^"]+)"`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("cannot find the demo run's id: exit %d\n%s", code, out)
	}
	demoRuns.ids[seed] = m[1]
	return demoRuns.db, m[1]
}
