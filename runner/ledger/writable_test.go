package ledger

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenSaysInSecondsThatAnotherProcessHoldsTheLock(t *testing.T) {
	t.Parallel()
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	// Another process's writer, stopped inside its transaction.
	other, err := sql.Open("sqlite", dsn(path, nil))
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
	if _, err := tx.Exec(`UPDATE runs SET name = 'x'`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Open(path)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--db") {
		t.Errorf("Open of a locked ledger: %v; want ErrLocked naming %s and what to do", err, path)
	}
	if took := time.Since(start); took > busyTimeoutMS*time.Millisecond {
		t.Errorf("Open took %s to say so", took)
	}
	// Reading does not need the lock.
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a locked ledger: %v", err)
	}
	defer r.Close()
	if _, err := r.Runs(0); err != nil {
		t.Errorf("Runs of a locked ledger: %v", err)
	}
}

// corruptLedger writes a ledger with a run and damages one of its index
// pages, so that quick_check fails while its runs table still reads.
func corruptLedger(t *testing.T, path string) {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateRun(RunRow{ID: "kept", Status: "completed", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := l.InsertRequest(&Request{RunID: "kept", Purpose: PurposeInference, Model: "m", Test: strings.Repeat("t", 40), Repeat: i}); err != nil {
			t.Fatal(err)
		}
	}
	var page int64
	if err := l.w.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'requests_by_run'`).Scan(&page); err != nil {
		t.Fatal(err)
	}
	var size int64
	if err := l.w.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	garbage := []byte(strings.Repeat("\xff", 64))
	if _, err := f.WriteAt(garbage, (page-1)*size+8); err != nil {
		t.Fatal(err)
	}
}

func TestADamagedLedgerIsRefusedForWritingAndStillReads(t *testing.T) {
	t.Parallel()
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	corruptLedger(t, path)
	_, err := Open(path)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "new ledger") {
		t.Fatalf("Open of a damaged ledger: %v; want ErrCorrupt naming %s and what to do", err, path)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly of a damaged ledger: %v", err)
	}
	defer r.Close()
	if run, err := r.Run("kept"); err != nil || run.Status != "completed" {
		t.Errorf("the damaged ledger's run reads %+v, %v", run, err)
	}
}
