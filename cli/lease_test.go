package cli

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"maps"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pitwall/runner/ledger"
)

// oldSameHostLimit is how long a live pid on this host could be silent
// before pitwall took it for a reused pid and closed its run (10 s): a
// stop longer than it is what broke runs.
const oldSameHostLimit = 10 * time.Second

// startRun starts `pitwall run config --headless` (and extra) in dir and
// returns it once its progress reaches a line on which at holds, with its
// stdout and the rest of its stderr gathered.
func startRun(t *testing.T, dir, config string, at func(string) bool, extra ...string) (*exec.Cmd, *bytes.Buffer, *safeBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"run", config, "--headless"}, extra...)...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
	})
	seen := &safeBuffer{}
	lines := bufio.NewScanner(stderr)
	reached := false
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if at(lines.Text()) {
			reached = true
			break
		}
	}
	if !reached {
		cmd.Wait()
		t.Fatalf("the run ended before the line to stop it at:\n%s", seen.String())
	}
	go func() {
		for lines.Scan() {
			seen.WriteString(lines.Text() + "\n")
		}
	}()
	return cmd, &stdout, seen
}

// exitOfCmd waits for cmd and returns its exit code.
func exitOfCmd(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// rawDB opens ledger db with SQLite alone, not through the ledger package,
// so that what it reads is what the file holds and reading it settles
// nothing.
func rawDB(t *testing.T, db string, readOnly bool) *sql.DB {
	t.Helper()
	q := url.Values{"_busy_timeout": {"200"}}
	if readOnly {
		q.Set("mode", "ro")
	}
	d, err := sql.Open("sqlite", "file:"+db+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// ledgerState is what the ledger file holds of a run: its row and its
// requests' statuses, as text to compare.
func ledgerState(t *testing.T, d *sql.DB, id string) string {
	t.Helper()
	var (
		status, host    string
		pid, gen        int64
		beat, ended, nr sql.NullInt64
	)
	err := d.QueryRow(`SELECT status, pid, host, heartbeat_ms, ended_ms, coalesce((SELECT count(*) FROM requests WHERE run_id = ?1), 0)
		FROM runs WHERE id = ?1`, id).Scan(&status, &pid, &host, &beat, &ended, &nr)
	if err != nil {
		t.Fatal(err)
	}
	// The generation is this build's; an older ledger has none to read.
	_ = d.QueryRow(`SELECT generation FROM runs WHERE id = ?`, id).Scan(&gen)
	rows, err := d.Query(`SELECT status, count(*) FROM requests WHERE run_id = ? GROUP BY status ORDER BY status`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	s := fmt.Sprintf("run %s pid %d on %s, heartbeat %v, ended %v, generation %d, %d requests:", status, pid, host, beat, ended, gen, nr.Int64)
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

// lastRunID is the newest run in the file.
func lastRunID(t *testing.T, d *sql.DB) string {
	t.Helper()
	var id string
	if err := d.QueryRow(`SELECT id FROM runs ORDER BY started_ms DESC, id DESC LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkPaidOnce checks that every cell of run id completed its inference
// with one request, that no judge sample was sent twice, and that the
// simulator received exactly the requests the ledger says were sent.
func checkPaidOnce(t *testing.T, db, id string, got map[string]int64, cells int) {
	t.Helper()
	var inference, judge, warm, warmJudge int64
	perCell := map[string]int{}
	perSample := map[string]int{}
	for _, q := range requestsOf(t, db, id) {
		switch q.Purpose {
		case ledger.PurposeInference:
			inference++
			perCell[cellKey(q.Model, q.Test, q.Repeat)]++
			if q.Status != ledger.StatusCompleted {
				t.Errorf("inference request %d of %s ended %s", q.ID, cellKey(q.Model, q.Test, q.Repeat), q.Status)
			}
		case ledger.PurposeJudge:
			if !sentOut(q) {
				continue
			}
			judge++
			perSample[fmt.Sprintf("%s %s/%d round %d", cellKey(q.CandidateModel, q.Test, q.Repeat), q.Judge, q.Sample, q.Round)]++
		case ledger.PurposeWarmup:
			if q.Model == "judge-a" {
				warmJudge++
			} else {
				warm++
			}
		}
	}
	if len(perCell) != cells {
		t.Errorf("%d cells have inference requests, want %d", len(perCell), cells)
	}
	for k, n := range perCell {
		if n != 1 {
			t.Errorf("cell %s was sent %d times, want once", k, n)
		}
	}
	for k, n := range perSample {
		if n != 1 {
			t.Errorf("judge sample %s was sent %d times, want once", k, n)
		}
	}
	var sim, simJudge int64
	for _, m := range resumeModels {
		sim += got[m]
	}
	simJudge = got["judge-a"]
	if sim != inference+warm || simJudge != judge+warmJudge {
		t.Errorf("the simulator received %d inference and %d judge requests; the ledger says %d+%d and %d+%d (warm-ups) were sent",
			sim, simJudge, inference, warm, judge, warmJudge)
	}
}

func TestAStoppedRunIsNeitherClosedNorTakenOverAndFinishesWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fleet, config := resumeFleet(t, dir, "")
	db := filepath.Join(dir, ".pitwall", "ledger.db")
	cmd, stdout, progress := startRun(t, dir, config, func(l string) bool { return strings.HasPrefix(l, "[2/24]") })
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The stop is the thing tested: it lasts past the old limit.
	time.Sleep(oldSameHostLimit + 2*time.Second)

	raw := rawDB(t, db, true)
	id := lastRunID(t, raw)
	before := ledgerState(t, raw, id)
	code, list, errOut := pitwall(t, dir, nil, "runs", "--db", db)
	if code != 0 {
		t.Fatalf("runs exited %d: %s", code, errOut)
	}
	if !strings.Contains(list, id) || !strings.Contains(list, "running") {
		t.Errorf("runs during the stop, want %s running:\n%s", id, list)
	}
	if after := ledgerState(t, raw, id); after != before {
		t.Errorf("runs changed the stopped run:\nbefore %s\nafter  %s", before, after)
	}
	for _, args := range [][]string{{"resume", "last"}, {"retry", "last"}} {
		code, _, msg := pitwall(t, dir, nil, append(args, "--headless", "--db", db)...)
		pid := fmt.Sprintf("pid %d", cmd.Process.Pid)
		if code != 2 || !strings.Contains(msg, "live process") || !strings.Contains(msg, pid) || !strings.Contains(msg, "since") {
			t.Errorf("%s of the stopped run: exit %d, %q; want 2 and a message that %s, alive, has run it since its start", args[0], code, msg, pid)
		}
		if after := ledgerState(t, raw, id); after != before {
			t.Errorf("%s changed the stopped run:\nbefore %s\nafter  %s", args[0], before, after)
		}
	}
	if code, _, errOut := pitwall(t, dir, nil, "show", "last", "--headless", "--db", db); code == 2 {
		t.Errorf("show during the stop exited 2: %s", errOut)
	}
	if after := ledgerState(t, raw, id); after != before {
		t.Errorf("show changed the stopped run:\nbefore %s\nafter  %s", before, after)
	}

	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code = exitOfCmd(t, cmd)
	if code != 0 && code != 1 {
		t.Fatalf("the run exited %d after its stop; want 0 or 1\n%s%s", code, stdout.String(), progress.String())
	}
	x := exportRun(t, dir, db, id)
	if x.Run.Status != "completed" {
		t.Errorf("run ended %s, want completed", x.Run.Status)
	}
	for _, c := range x.Cells {
		if c.Status != "completed" && c.Status != "failed" {
			t.Errorf("cell %s ended %s, want its inference completed", cellKey(c.Model, c.Test, c.Repeat), c.Status)
		}
	}
	if got, ok, err := recordedExit(db, id); err != nil || !ok || got != code {
		t.Errorf("the ledger records exit %d (%v, %v), want the %d the run returned", got, ok, err, code)
	}
	checkPaidOnce(t, db, id, fleet.requests(t), 24)
}

// stopUnlocked stops cmd at a moment it holds no write lock on ledger db:
// a process stopped inside a commit holds the lock, and another host's
// process could not write either. Where it does, it is let go on a little
// and stopped again.
func stopUnlocked(t *testing.T, cmd *exec.Cmd, db string) {
	t.Helper()
	d := rawDB(t, db, false)
	for try := 0; try < 50; try++ {
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		tx, err := d.Begin()
		if err == nil {
			_, err = tx.Exec(`UPDATE runs SET name = name WHERE 0`)
			tx.Rollback()
		}
		if err == nil {
			return
		}
		cmd.Process.Signal(syscall.SIGCONT)
		time.Sleep(3 * time.Millisecond)
	}
	t.Fatal("the run held the ledger's write lock at every stop")
}

func TestARunTakenOverFromAnotherHostStopsWithoutWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, config := resumeFleet(t, dir, "")
	db := filepath.Join(dir, ".pitwall", "ledger.db")
	cmd, stdout, progress := startRun(t, dir, config, func(l string) bool { return strings.HasPrefix(l, "[3/24]") })
	stopUnlocked(t, cmd, db)

	// As another host sees the stopped run once its lease has lapsed: the
	// same row, owned by a process of host-a, silent for three minutes.
	rw := rawDB(t, db, false)
	id := lastRunID(t, rw)
	if _, err := rw.Exec(`UPDATE runs SET host = 'host-a', heartbeat_ms = heartbeat_ms - 180000 WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	taker := exec.Command(bin, "resume", id, "--headless", "--db", db)
	taker.Dir = dir
	var takerOut, takerErr bytes.Buffer
	taker.Stdout, taker.Stderr = &takerOut, &takerErr
	if err := taker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taker.Process.Kill() })
	// Once the resume owns the run, the first process wakes.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var pid int
		if err := rw.QueryRow(`SELECT pid FROM runs WHERE id = ?`, id).Scan(&pid); err == nil && pid == taker.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resume never took the run over:\n%s", takerErr.String())
		}
	}
	// The rows that had ended at the take-over (it closed the first
	// process's open ones as interrupted); the open ones are the resume's.
	atTakeOver := map[int64]string{}
	for _, q := range requestsOf(t, db, id) {
		switch q.Status {
		case ledger.StatusQueued, ledger.StatusRunning, ledger.StatusSubmitted:
		default:
			atTakeOver[q.ID] = q.Status
		}
	}
	if !slices.Contains(slices.Collect(maps.Values(atTakeOver)), ledger.StatusInterrupted) {
		t.Fatal("the take-over closed no request of the first process: it was stopped with nothing in flight")
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code := exitOfCmd(t, cmd)
	out := stdout.String() + progress.String()
	want := fmt.Sprintf("run %s was taken over by pid %d", id, taker.Process.Pid)
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, "this process stopped without changing it") {
		t.Errorf("the first process exited %d; want 2, saying %q and that it stopped without changing it:\n%s", code, want, out)
	}
	takerCode := exitOfCmd(t, taker)
	if takerCode != 0 && takerCode != 1 {
		t.Fatalf("the resume exited %d:\n%s", takerCode, takerErr.String())
	}

	// Nothing of the first process's after the take-over is in the ledger:
	// the requests the take-over closed stay as it left them, nothing is
	// cancelled, and every cell completed once, by the resume.
	for _, q := range requestsOf(t, db, id) {
		if was, ok := atTakeOver[q.ID]; ok && was != q.Status {
			t.Errorf("request %d (%s %s) was %s at the take-over and is %s now: the first process wrote it", q.ID, q.Purpose, q.Model, was, q.Status)
		}
		if q.Status == ledger.StatusCanceled {
			t.Errorf("request %d (%s %s) is canceled", q.ID, q.Purpose, q.Model)
		}
	}
	x := exportRun(t, dir, db, id)
	if x.Run.Status != "completed" {
		t.Errorf("run ended %s, want completed (by the resume)", x.Run.Status)
	}
	for _, c := range x.Cells {
		if c.Status != "completed" && c.Status != "failed" {
			t.Errorf("cell %s ended %s, want completed", cellKey(c.Model, c.Test, c.Repeat), c.Status)
		}
	}
	if got, ok, err := recordedExit(db, id); err != nil || !ok || got != takerCode {
		t.Errorf("the ledger records exit %d (%v, %v), want the resume's %d", got, ok, err, takerCode)
	}
}

// ownerFresh is how long after its last heartbeat a run's process sends
// without asking the ledger whether it still owns the run (runner's
// ownerFresh: three heartbeats).
const ownerFresh = 3 * ledger.HeartbeatEvery

func TestASupersededOwnerThatWakesSendsNoRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fleet, config := resumeFleet(t, dir, "")
	db := filepath.Join(dir, ".pitwall", "ledger.db")
	cmd, stdout, progress := startRun(t, dir, config, func(l string) bool { return strings.HasPrefix(l, "[3/24]") })
	stopUnlocked(t, cmd, db)
	stopped := time.Now()

	rw := rawDB(t, db, false)
	id := lastRunID(t, rw)
	if _, err := rw.Exec(`UPDATE runs SET host = 'host-a', heartbeat_ms = heartbeat_ms - 180000 WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	// Another host resumes the run and finishes it while the first process
	// sleeps, so that every request the simulator gets after the wake can
	// only be the first process's.
	taker := exec.Command(bin, "resume", id, "--headless", "--db", db)
	taker.Dir = dir
	var takerErr bytes.Buffer
	taker.Stdout, taker.Stderr = &bytes.Buffer{}, &takerErr
	if err := taker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taker.Process.Kill() })
	if code := exitOfCmd(t, taker); code != 0 && code != 1 {
		t.Fatalf("the resume exited %d:\n%s", code, takerErr.String())
	}
	// As a paused process finds itself: silent past its heartbeats.
	time.Sleep(time.Until(stopped.Add(ownerFresh + 2*time.Second)))
	before := fleet.requests(t)

	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code := exitOfCmd(t, cmd)
	out := stdout.String() + progress.String()
	if code != 2 || !strings.Contains(out, "was taken over by") {
		t.Errorf("the first process exited %d; want 2, saying its run was taken over:\n%s", code, out)
	}
	after := fleet.requests(t)
	var models []string
	for m := range after {
		models = append(models, m)
	}
	if n := sent(before, after, models...); n != 0 {
		t.Errorf("the first process sent %d requests after it woke (before %v, after %v); want none", n, before, after)
	}
}

// safeBuffer is a strings.Builder one goroutine writes while another reads.
type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) WriteString(x string) {
	s.mu.Lock()
	s.b.WriteString(x)
	s.mu.Unlock()
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.WriteString(string(p))
	return len(p), nil
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
