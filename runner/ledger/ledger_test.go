package ledger

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pitwall/internal/pgtest"
)

func TestMain(m *testing.M) {
	// The crash tests re-execute this binary as the writer they kill.
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	if path := os.Getenv(ownerChildEnv); path != "" {
		os.Exit(ownerChild(path))
	}
	os.Exit(pgtest.Main(m, func(c *pgtest.Cluster) { testPG = c }))
}

// testPG is the cluster of the PostgreSQL pass (pgtest.Main runs every
// test twice: on SQLite, then on PostgreSQL); nil on SQLite's.
var testPG *pgtest.Cluster

// testPath is where a test's ledger lives on this pass's backend: a file
// in a temporary folder, or a fresh PostgreSQL database's URL.
func testPath(t testing.TB) string {
	t.Helper()
	if testPG != nil {
		return testPG.NewDatabase(t)
	}
	return filepath.Join(t.TempDir(), "ledger.db")
}

// sqliteOnly ends a test of SQLite's own ways (its file, its PRAGMAs,
// its locks) on the PostgreSQL pass, where they have no counterpart.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if testPG != nil {
		t.Skip("SQLite's file, PRAGMAs or locks: no counterpart on PostgreSQL")
	}
}

// openTest opens a fresh ledger on this pass's backend, closed at cleanup.
func openTest(t *testing.T) *Ledger {
	t.Helper()
	l, err := Open(testPath(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// ms builds a time the ledger stores exactly (to the millisecond), so
// round trips compare with ==.
func ms(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return time.UnixMilli(t.UnixMilli())
}

func pragma(t *testing.T, db db, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestOpenCreatesFoldersInWALModeAtCurrentSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rel  string
	}{
		{"nested folders", filepath.Join("a", "b", ".pitwall", "ledger.db")},
		{"URI characters in folder names", filepath.Join("what?#100%", "ledger.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.rel)
			l, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.Path() != path {
				t.Errorf("Path() = %q, want %q", l.Path(), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("database not at the path given: %v", err)
			}
			if got := pragma(t, l.w, "journal_mode"); got != "wal" {
				t.Errorf("journal_mode = %q, want wal", got)
			}
			if got := pragma(t, l.w, "synchronous"); got != "1" {
				t.Errorf("synchronous = %q, want 1 (NORMAL)", got)
			}
			if got := pragma(t, l.w, "busy_timeout"); got == "0" {
				t.Error("busy_timeout is 0: a second process's lock fails at once")
			}
			if got, want := pragma(t, l.w, "user_version"), strconv.Itoa(schemaVersion()); got != want {
				t.Errorf("user_version = %s, want %s", got, want)
			}
		})
	}
}

func TestOpenMigratesAnEmptyDatabaseAndKeepsDataOnReopen(t *testing.T) {
	t.Parallel()
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	// An empty SQLite file: version 0, no tables.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE unrelated (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateRun(RunRow{ID: "r1", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l.Close()
	if _, err := l.Run("r1"); err != nil {
		t.Errorf("run lost on reopen: %v", err)
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for name, open := range map[string]func(string) (*Ledger, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		t.Run(name, func(t *testing.T) {
			l, err := open(path)
			if err == nil {
				l.Close()
				t.Fatal("opened a ledger with schema version 99")
			}
			if !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q should say the schema is newer and name the path", err)
			}
		})
	}
}

func TestOpenReadOnlyRefusesWhatIsNotALedger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	db, err := sql.Open("sqlite", empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE x (y)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	tests := []struct {
		name string
		path string
	}{
		{"missing file", filepath.Join(dir, "nope", "ledger.db")},
		{"database without schema", empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := OpenReadOnly(tt.path)
			if err == nil {
				l.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not wrap fs.ErrNotExist", err)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the path", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("OpenReadOnly created a folder")
	}
}

func TestReadOnlyLedgerReadsAndRefusesEveryWrite(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateRun(RunRow{ID: "r1", Name: "kept"}); err != nil {
		t.Fatal(err)
	}
	// Closed cleanly, so no -wal or -shm is left for the reader to find.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if r, err := l.Run("last"); err != nil || r.Name != "kept" {
		t.Fatalf("Run(last) = %+v, %v", r, err)
	}
	writes := map[string]func() error{
		"CreateRun": func() error { return l.CreateRun(RunRow{ID: "r2"}) },
		"FinishRun": func() error { return l.FinishRun("r1", "completed", "", time.Now()) },
		"InsertRequest": func() error {
			_, err := l.InsertRequest(&Request{RunID: "r1", Purpose: PurposeProbe})
			return err
		},
		"StartRequest":  func() error { return l.StartRequest(1, "gpu0", time.Now()) },
		"FinishRequest": func() error { return l.FinishRequest(&Request{ID: 1, Status: StatusCompleted}) },
		"CancelOpen": func() error {
			_, err := l.CancelOpen("r1", time.Now())
			return err
		},
		"PutCell":    func() error { return l.PutCell(CellRow{RunID: "r1"}) },
		"PutVerdict": func() error { return l.PutVerdict(VerdictRow{RunID: "r1"}) },
	}
	for name, write := range writes {
		if err := write(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only ledger: %v, want ErrReadOnly", name, err)
		}
	}
}

func TestHotQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	sqliteOnly(t) // EXPLAIN QUERY PLAN
	l := openTest(t)
	tests := []struct {
		name, query, index string
		args               []any
	}{
		{"requests of a run", requestsOfRunSQL, "requests_by_run", []any{"r"}},
		{"judge cache", cachedJudgeSQL, "requests_by_cache_key", []any{"k"}},
		{"inference cache", cachedInferenceSQL, "requests_by_cache_key", []any{"k"}},
		{"judge cache, keys at once", "WITH k(i, key) AS (VALUES (0, ?), (1, ?))" + cachedJudgesSQL, "requests_by_cache_key", []any{"k", "l"}},
		{"open requests of a run", openRequestsSQL, "requests_by_run", []any{"r"}},
		{"completed requests of a run", completedSQL, "requests_by_run", []any{"r", PurposeJudge}},
		{"a run's last sign of life", sqliteDialect.activity, "requests_by_run", []any{"r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := l.r.Query("EXPLAIN QUERY PLAN "+tt.query, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			got := strings.Join(plan, "; ")
			if !strings.Contains(got, tt.index) {
				t.Errorf("plan %q does not use %s", got, tt.index)
			}
			if strings.Contains(got, "TEMP B-TREE") {
				t.Errorf("plan %q sorts in a temporary b-tree", got)
			}
			if strings.Contains(got, "SCAN requests") {
				t.Errorf("plan %q reads every request (or every entry of the index)", got)
			}
		})
	}
}
