package cli

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ledgerEdgeWait bounds how long a command may take to refuse a ledger it
// cannot write: seconds, not the minutes of a hang.
const ledgerEdgeWait = 15 * time.Second

// edgeDir is a folder with a finished demo run in dir/ledger.db, that any
// user may read (a read-only ledger is tested as an unprivileged user when
// the tests run as root, since root writes any file).
func edgeDir(t *testing.T) (dir, db, config string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pitwall-edge")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	db = filepath.Join(dir, "ledger.db")
	code, _, errOut := pitwall(t, dir, []string{"PITWALL_SIM_TIME_SCALE=0.01"}, "run", demoPath(t), "--headless", "--db", db)
	if code != 0 && code != 1 {
		t.Fatalf("the demo run exited %d: %s", code, errOut)
	}
	for _, p := range []string{dir, filepath.Dir(bin)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, db, demoPath(t)
}

// edgeCommands are the commands that write a ledger, as a user runs them on
// db's finished run. resume is not among them: of a finished run it says
// there is nothing to resume and writes nothing
// (TestResumingACompletedRunSaysThereIsNothingToResume); it goes on through
// continueRun, as retry does.
func edgeCommands(db, config string) [][]string {
	return [][]string{
		{"run", config, "--headless", "--db", db},
		{"rejudge", "last", "--headless", "--db", db},
		{"retry", "last", "--headless", "--db", db},
	}
}

// runBounded runs pitwall in dir as uid (0: as this process) and returns
// its exit code, its stderr and how long it took; past ledgerEdgeWait it is
// killed and the test fails.
func runBounded(t *testing.T, dir string, uid int, args ...string) (int, string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ledgerEdgeWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PITWALL_SIM_TIME_SCALE=0.01")
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &bytes.Buffer{}
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("pitwall %s was still running after %s:\n%s", strings.Join(args, " "), ledgerEdgeWait, stderr.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String(), took
}

func TestEveryCommandRefusesALedgerItCannotWriteInSeconds(t *testing.T) {
	t.Parallel()
	// The file read-only, its folder writable (SQLite would open it
	// read-only without a word: `rejudge` hung), or both read-only; for a
	// user who does not own them, since root writes any file.
	uid := 0
	if os.Geteuid() == 0 {
		uid = 65534 // nobody
	}
	for _, tc := range []struct {
		name         string
		folderWrites bool
	}{{"file", true}, {"file and folder", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, db, config := edgeDir(t)
			if err := os.Chmod(db, 0o444); err != nil {
				t.Fatal(err)
			}
			mode := os.FileMode(0o555)
			if tc.folderWrites {
				mode = 0o777
			}
			if err := os.Chmod(dir, mode); err != nil {
				t.Fatal(err)
			}
			for _, args := range edgeCommands(db, config) {
				code, msg, took := runBounded(t, dir, uid, args...)
				if code != 2 || !strings.Contains(msg, db) || !strings.Contains(msg, "cannot be written") || !strings.Contains(msg, "writable") {
					t.Errorf("%s on a read-only ledger: exit %d after %s, %q; want 2, naming %s, saying it cannot be written and what to do",
						args[0], code, took.Round(time.Millisecond), msg, db)
				}
			}
			for _, args := range [][]string{{"runs", "--db", db}, {"export", "last", "--db", db}} {
				if code, msg, _ := runBounded(t, dir, uid, args...); code != 0 {
					t.Errorf("%s on a read-only ledger: exit %d, %q; want it read", args[0], code, msg)
				}
			}
		})
	}
}

func TestEveryCommandRefusesALockedLedgerInSeconds(t *testing.T) {
	t.Parallel()
	dir, db, config := edgeDir(t)
	// Another process's write, stopped before its commit.
	other, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE runs SET name = name || ''`); err != nil {
		t.Fatal(err)
	}
	for _, args := range edgeCommands(db, config) {
		code, msg, took := runBounded(t, dir, 0, args...)
		if code != 2 || !strings.Contains(msg, db) || !strings.Contains(msg, "locked by another process") {
			t.Errorf("%s on a locked ledger: exit %d after %s, %q; want 2, naming %s, saying another process holds it",
				args[0], code, took.Round(time.Millisecond), msg, db)
		}
	}
	// Reading needs no lock.
	for _, args := range [][]string{{"runs", "--db", db}, {"export", "last", "--db", db}} {
		if code, msg, _ := runBounded(t, dir, 0, args...); code != 0 {
			t.Errorf("%s on a locked ledger: exit %d, %q; want it read", args[0], code, msg)
		}
	}
}

func TestEveryCommandRefusesToWriteADamagedLedgerAndReadingStillReads(t *testing.T) {
	t.Parallel()
	dir, db, config := edgeDir(t)
	d, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	var page, size int64
	if err := d.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'requests_by_run'`).Scan(&page); err != nil {
		t.Fatal(err)
	}
	if err := d.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	d.Close()
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 64), (page-1)*size+8); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, args := range edgeCommands(db, config) {
		code, msg, took := runBounded(t, dir, 0, args...)
		if code != 2 || !strings.Contains(msg, db) || !strings.Contains(msg, "integrity check") || !strings.Contains(msg, "new ledger") {
			t.Errorf("%s on a damaged ledger: exit %d after %s, %q; want 2, naming %s, saying it fails the check and what to do",
				args[0], code, took.Round(time.Millisecond), msg, db)
		}
	}
	if code, msg, _ := runBounded(t, dir, 0, "runs", "--db", db); code != 0 {
		t.Errorf("runs on a damaged ledger whose runs table is whole: exit %d, %q; want it read", code, msg)
	}
}
