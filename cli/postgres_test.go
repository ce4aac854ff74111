package cli

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/internal/pgtest"
	"pitwall/runner/ledger"
)

// A team's ledger on PostgreSQL, through the binary: two processes write
// runs into one database at once and both complete; runs, show, export,
// compare and rejudge read and write it; a --reuse run in a third process
// sends no inference the others paid for; the password shows nowhere.
func TestATeamLedgerOnPostgreSQL(t *testing.T) {
	t.Parallel()
	url := startPostgres(t)
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

// startPostgres starts a throwaway PostgreSQL cluster for the test and
// returns the URL of a fresh database in it; without the server's
// binaries the test skips, saying why (it fails in CI, which installs them).
func startPostgres(t *testing.T) string {
	t.Helper()
	c, err := pgtest.Start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(c.Stop)
	return c.NewDatabase(t)
}

// stopIdle stops cmd at a moment none of its connections to the database
// at url is inside a transaction: a process stopped inside one holds the
// row locks a take-over waits for. Where it is, it is let go on a little
// and stopped again.
func stopIdle(t *testing.T, cmd *exec.Cmd, d *sql.DB) {
	t.Helper()
	for try := 0; try < 100; try++ {
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		var busy int
		err := d.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`).Scan(&busy)
		if err != nil {
			t.Fatal(err)
		}
		if busy == 0 {
			return
		}
		cmd.Process.Signal(syscall.SIGCONT)
		time.Sleep(3 * time.Millisecond)
	}
	t.Fatal("the run was inside a transaction at every stop")
}

// pgRunState is what the database holds of a run: its row and its
// requests' statuses, as text to compare.
func pgRunState(t *testing.T, d *sql.DB, id string) string {
	t.Helper()
	var (
		status, host, user string
		pid, gen           int64
		beat, ended        sql.NullInt64
	)
	err := d.QueryRow(`SELECT status, pid, host, owner_user, heartbeat_ms, ended_ms, generation FROM runs WHERE id = $1`, id).
		Scan(&status, &pid, &host, &user, &beat, &ended, &gen)
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("run %s pid %d on %s as %s, heartbeat %v, ended %v, generation %d, requests:", status, pid, host, user, beat, ended, gen)
	rows, err := d.Query(`SELECT status, count(*) FROM requests WHERE run_id = $1 GROUP BY status ORDER BY status`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprintf(" %s %d", st, n)
	}
	return s
}

// A run in a team's ledger, its process stopped (SIGSTOP) on "host-a": a
// resume from this host is refused while the owner's lease lives, and
// changes nothing; once the lease has lapsed the resume takes the run
// over and completes it, and the first process, woken, exits 2 without
// writing anything (nothing cancelled, nothing the take-over closed
// reopened).
func TestAResumeFromAnotherHostOnPostgreSQLWaitsForTheLease(t *testing.T) {
	t.Parallel()
	url := startPostgres(t)
	dir := t.TempDir()
	_, config := resumeFleet(t, dir, "")
	cmd, stdout, progress := startRun(t, dir, config, func(l string) bool { return strings.HasPrefix(l, "[3/24]") }, "--db", url)
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	stopIdle(t, cmd, raw)
	id := lastRunID(t, raw)

	// As another host sees the stopped run: owned by a process of host-a,
	// silent for a minute, within its lease.
	if _, err := raw.Exec(`UPDATE runs SET host = 'host-a', heartbeat_ms = heartbeat_ms - 60000 WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	before := pgRunState(t, raw, id)
	code, _, msg := pitwall(t, dir, nil, "resume", id, "--headless", "--db", url)
	owner := fmt.Sprintf("pid %d on host-a", cmd.Process.Pid)
	if code != 2 || !strings.Contains(msg, "live process") || !strings.Contains(msg, owner) {
		t.Errorf("resume within the lease: exit %d, %q; want 2, saying %s holds it", code, msg, owner)
	}
	if strings.Contains(msg, pgtest.Password) {
		t.Errorf("resume shows the ledger's password: %s", msg)
	}
	if after := pgRunState(t, raw, id); after != before {
		t.Errorf("the refused resume changed the run:\nbefore %s\nafter  %s", before, after)
	}

	// Three minutes silent: the lease has lapsed.
	if _, err := raw.Exec(`UPDATE runs SET heartbeat_ms = heartbeat_ms - 120000 WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	taker := exec.Command(bin, "resume", id, "--headless", "--db", url)
	taker.Dir = dir
	var takerErr bytes.Buffer
	taker.Stdout, taker.Stderr = &bytes.Buffer{}, &takerErr
	if err := taker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taker.Process.Kill() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var pid int
		if err := raw.QueryRow(`SELECT pid FROM runs WHERE id = $1`, id).Scan(&pid); err == nil && pid == taker.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resume never took the run over:\n%s", takerErr.String())
		}
	}
	atTakeOver := map[int64]string{}
	for _, q := range requestsOf(t, url, id) {
		switch q.Status {
		case ledger.StatusQueued, ledger.StatusRunning, ledger.StatusSubmitted:
		default:
			atTakeOver[q.ID] = q.Status
		}
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code = exitOfCmd(t, cmd)
	out := stdout.String() + progress.String()
	want := fmt.Sprintf("run %s was taken over by pid %d", id, taker.Process.Pid)
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, "this process stopped without changing it") {
		t.Errorf("the first process exited %d; want 2, saying %q and that it stopped without changing it:\n%s", code, want, out)
	}
	takerCode := exitOfCmd(t, taker)
	if takerCode != 0 && takerCode != 1 {
		t.Fatalf("the resume exited %d:\n%s", takerCode, takerErr.String())
	}
	for _, q := range requestsOf(t, url, id) {
		if was, ok := atTakeOver[q.ID]; ok && was != q.Status {
			t.Errorf("request %d (%s %s) was %s at the take-over and is %s now: the first process wrote it", q.ID, q.Purpose, q.Model, was, q.Status)
		}
		if q.Status == ledger.StatusCanceled {
			t.Errorf("request %d (%s %s) is canceled", q.ID, q.Purpose, q.Model)
		}
	}
	x := exportRun(t, dir, url, id)
	if x.Run.Status != "completed" {
		t.Errorf("run ended %s, want completed (by the resume)", x.Run.Status)
	}
	for _, c := range x.Cells {
		if c.Status != "completed" && c.Status != "failed" {
			t.Errorf("cell %s ended %s, want completed", cellKey(c.Model, c.Test, c.Repeat), c.Status)
		}
	}
	if got, ok, err := recordedExit(url, id); err != nil || !ok || got != takerCode {
		t.Errorf("the ledger records exit %d (%v, %v), want the resume's %d", got, ok, err, takerCode)
	}
}
