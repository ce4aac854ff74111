package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/internal/pgtest"
	"pitwall/runner/ledger"
)

// A team's ledger on PostgreSQL, through the binary: two processes write
// runs into one database at once and both complete; runs, show, export,
// compare and rejudge read and write it; a --reuse run in a third process
// sends no inference the others paid for; the password shows nowhere.
func TestATeamLedgerOnPostgreSQL(t *testing.T) {
	c, err := pgtest.Start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer c.Stop()
	url := c.NewDatabase(t)
	dir := t.TempDir()
	cfgs := []string{demoConfig(t, dir, 1), demoConfig(t, dir, 2)}
	var wg sync.WaitGroup
	type result struct {
		code        int
		out, stderr string
	}
	results := make([]result, len(cfgs))
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, stderr := runBin(t, dir, nil, "run", cfg, "--headless", "--time-scale", "0", "--db", url)
			results[i] = result{code, out, stderr}
		}()
	}
	wg.Wait()
	noPassword := func(what, s string) {
		t.Helper()
		if strings.Contains(s, pgtest.Password) {
			t.Errorf("%s shows the ledger's password:\n%s", what, s)
		}
	}
	for i, r := range results {
		if r.code != 0 && r.code != 1 {
			t.Fatalf("run %d exited %d:\n%s", i, r.code, r.stderr)
		}
		noPassword("run", r.out+r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "postgres:")); err == nil {
		t.Fatal("the URL was taken for a file path")
	}

	code, out, stderr := runBin(t, dir, nil, "runs", "--db", url, "--json")
	noPassword("runs", out+stderr)
	var runs []runSummary
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil || len(runs) != 2 {
		t.Fatalf("runs: exit %d, %v: %s%s", code, err, out, stderr)
	}
	for _, r := range runs {
		if r.Status != "completed" || r.Pass == 0 {
			t.Errorf("run %s: %s with %d passes", r.ID, r.Status, r.Pass)
		}
	}
	code, table, stderr := runBin(t, dir, nil, "runs", "--db", url)
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, stderr)
	}
	checkRunsBy(t, url, runs, table)
	a, b := runs[0].ID, runs[1].ID
	for _, args := range [][]string{
		{"show", a, "--headless"},
		{"export", b, "--format", "md"},
		{"compare", a, b},
		{"rejudge", a, "--config", cfgs[0], "--headless", "--only", "failed"},
	} {
		code, out, stderr := runBin(t, dir, nil, append(args, "--db", url)...)
		noPassword(args[0], out+stderr)
		if code != 0 && code != 1 {
			t.Errorf("%s: exit %d:\n%s", args[0], code, stderr)
		}
	}

	// Seed 1 again in a third process, reusing what the team paid for.
	code, out, stderr = runBin(t, dir, nil, "run", cfgs[0], "--headless", "--time-scale", "0", "--reuse", "--db", url)
	if code != 0 && code != 1 {
		t.Fatalf("reuse run: exit %d:\n%s", code, stderr)
	}
	noPassword("reuse run", out+stderr)
	led, err := ledger.OpenReadOnly(url)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	paid := map[string]bool{}
	for _, id := range []string{a, b} {
		reqs, err := led.Requests(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs {
			if r.Purpose == ledger.PurposeInference && r.Status == ledger.StatusCompleted && r.CacheKey != "" {
				paid[r.CacheKey] = true
			}
		}
	}
	last, err := led.Run(ledger.LastRun)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := led.Requests(last.ID)
	if err != nil {
		t.Fatal(err)
	}
	sent, reused := 0, 0
	for _, r := range reqs {
		switch {
		case r.Purpose != ledger.PurposeInference || !paid[r.CacheKey]:
		case r.Server == chat.ServerCache:
			reused++
		default:
			sent++
		}
	}
	if sent != 0 || reused == 0 {
		t.Errorf("the --reuse run sent %d inference requests the team already paid for (and reused %d)", sent, reused)
	}
}
