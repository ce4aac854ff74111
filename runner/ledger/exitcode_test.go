package ledger

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A run's exit code is what its process was recorded to return, for the
// end it was recorded at: none before it ends, none once it is resumed,
// and the new one once it ends again.
func TestExitCodeBelongsToTheEndItWasRecordedFor(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	start := ms("2026-01-02T03:04:05.006Z")
	if err := l.CreateRun(RunRow{ID: "r1", StartedAt: start, Owner: l.Self(), Heartbeat: start}); err != nil {
		t.Fatal(err)
	}
	want := func(step string, code int, ok bool) {
		t.Helper()
		got, has, err := exitCode(l, "r1")
		if err != nil || has != ok || got != code {
			t.Errorf("%s: exit code %d, %v, %v; want %d, %v", step, got, has, err, code, ok)
		}
	}
	want("running", 0, false)
	if err := l.SetExitCode("r1", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetExitCode before the end: %v, want ErrNotFound", err)
	}
	if err := l.FinishRun("r1", "stopped", "stopped", start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	want("finished, none recorded", 0, false)
	if err := l.SetExitCode("r1", 130); err != nil {
		t.Fatal(err)
	}
	want("recorded", 130, true)
	if err := l.SetScoring("r1", "judge", `{"mode":"judge"}`); err != nil {
		t.Fatal(err)
	}
	want("after a re-judge's scoring change", 130, true)

	if _, err := l.ResumeRun("r1", start.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	want("resumed", 0, false)
	if err := l.FinishRun("r1", "completed", "", start.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	want("ended again", 0, false)
	if err := l.SetExitCode("r1", 0); err != nil {
		t.Fatal(err)
	}
	want("recorded again", 0, true)

	if _, _, err := exitCode(l, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ExitCode of an unknown run: %v, want ErrNotFound", err)
	}
	if err := l.SetExitCode("nope", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetExitCode of an unknown run: %v, want ErrNotFound", err)
	}
}

// A run recorded by a build before schema 7 has no exit code once
// migrated.
func TestExitCodeOfARunOfAnEarlierSchemaIsUnknown(t *testing.T) {
	t.Parallel()
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sqliteMigrations[:6] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 6;
		INSERT INTO runs (id, status, started_ms, ended_ms) VALUES ('old', 'completed', 1000, 2000);`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if code, ok, err := exitCode(l, "old"); err != nil || ok {
		t.Errorf("an old run's exit code: %d, %v, %v; want none", code, ok, err)
	}
	if err := l.SetExitCode("old", 1); err != nil {
		t.Fatal(err)
	}
	if code, ok, _ := exitCode(l, "old"); !ok || code != 1 {
		t.Errorf("after SetExitCode: %d, %v", code, ok)
	}
}

// exitCode is the exit code recorded for run id, as its row reads it back;
// ok is false when none is.
func exitCode(l *Ledger, id string) (code int, ok bool, err error) {
	r, err := l.Run(id)
	if err != nil || r.ExitCode == nil {
		return 0, false, err
	}
	return *r.ExitCode, true, nil
}
