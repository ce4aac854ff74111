package ledger

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Storage conventions, for anyone reading the database with other tools:
//
//   - Times are INTEGER unix milliseconds (columns ending in _ms), NULL for
//     a zero time.Time; they come back in the local zone, to the millisecond.
//   - Durations (TTFT, latency) are INTEGER microseconds (columns ending in
//     _us), because a simulated or cached reply can take well under a
//     millisecond. VerdictRow.LatencyMS is stored as given, in milliseconds.
//   - Models and Tests of a run are JSON arrays; ToolCalls, Checks, Detail,
//     Input and Params are stored as the JSON text the caller gives.
//
// Durability: the database is in WAL mode with synchronous=NORMAL. A commit
// appends its frames to the WAL with write(2) before the call returns, so a
// row is in the kernel's page cache once Exec returns and survives the
// process being killed at any point (SIGKILL, panic, OOM). The WAL is not
// fsynced at each commit, so a power loss or kernel crash may roll back the
// last few commits, never corrupt the file. synchronous=FULL would add an
// fsync to each of the three writes a request makes, for protection against
// an event that also loses the GPU servers' work.

// Errors callers match with errors.Is.
var (
	// ErrNotFound: no run or request with that id.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: a run id prefix matches more than one run. Errors that
	// wrap it also wrap ErrNotFound.
	ErrAmbiguous = errors.New("ambiguous run id")
	// ErrReadOnly: a write on a ledger opened with OpenReadOnly.
	ErrReadOnly = errors.New("ledger opened read-only")
	// ErrNotOpen: StartRequest on a request that has already ended (for
	// example one that CancelOpen cancelled): it must not be sent.
	ErrNotOpen = errors.New("request is no longer open")
	// ErrSecret: a run's config holds what looks like an API key.
	ErrSecret = errors.New("refusing to store an API key")
	// ErrHeld: ResumeRun of a run that a live process is running.
	ErrHeld = errors.New("run is being run by a live process")
	// ErrTakenOver: Heartbeat of a run that another process has resumed
	// since: this process must stop sending for it.
	ErrTakenOver = errors.New("run was taken over by another process")
)

// busyTimeoutMS bounds how long a statement waits for another process's
// lock (a second pitwall on the same ledger, a checkpoint) before failing.
const busyTimeoutMS = 10000

// readConns is the size of the read pool; reads never block the writer in
// WAL mode, so a few are enough for the UI, export and the runner together.
const readConns = 4

// Ledger is an open ledger. Its methods are safe for concurrent use.
type Ledger struct {
	path string
	abs  string
	// w has exactly one connection, so every write is serialised in this
	// process and no two of our own writes ever contend for SQLite's lock.
	// It is nil for a ledger opened read-only.
	w *sql.DB
	r *sql.DB

	insertReq *sql.Stmt
	startReq  *sql.Stmt
	finishReq *sql.Stmt

	// What liveness is judged with (see liveness.go); tests replace them.
	self  Owner
	now   func() time.Time
	alive func(pid int) bool

	// fix writes reconciles for a ledger opened read-only (see fixer).
	fixMu     sync.Mutex
	fix       *sql.DB
	fixBusyMS int
}

func newLedger(path string) *Ledger {
	return &Ledger{path: path, self: self(), now: time.Now, alive: pidAlive, fixBusyMS: fixerBusyMS}
}

// Open opens the ledger at path for reading and writing, creating it and
// its parent folders if needed and migrating its schema to this build's.
func Open(path string) (*Ledger, error) {
	l := newLedger(path)
	if path == "" {
		return nil, l.wrap("open", errors.New("empty path"))
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, l.wrap("create folder", err)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, l.wrap("resolve path", err)
	}
	l.abs = abs
	w, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_busy_timeout": {fmt.Sprint(busyTimeoutMS)},
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		// BEGIN IMMEDIATE takes the write lock up front, so a migration
		// racing another process waits on busy_timeout instead of failing
		// when it upgrades a read lock.
		"_txlock": {"immediate"},
	}))
	if err != nil {
		return nil, l.wrap("open", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	l.w = w
	if err := l.setUp(abs); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Ledger) setUp(abs string) error {
	var mode string
	if err := l.w.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		return l.wrap("open", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return l.wrap("open", fmt.Errorf("journal_mode is %q, not wal (is the folder on a network filesystem?)", mode))
	}
	if err := l.migrate(); err != nil {
		return err
	}
	if err := l.openReader(abs); err != nil {
		return err
	}
	return l.prepare()
}

// OpenReadOnly opens an existing ledger for reading only, for `runs`,
// `show` and `export` while another process may be writing to it. It never
// creates or migrates: a missing file is an error wrapping fs.ErrNotExist.
// Its write methods fail with ErrReadOnly. One thing is written all the
// same: a run found interrupted is reconciled on disk where the file can
// be written (reconcile.go), and only shown so where it cannot.
func OpenReadOnly(path string) (*Ledger, error) {
	l := newLedger(path)
	if _, err := os.Stat(path); err != nil {
		return nil, l.wrap("open", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, l.wrap("resolve path", err)
	}
	l.abs = abs
	if err := l.openReader(abs); err != nil {
		return nil, err
	}
	var v int
	if err := l.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		l.Close()
		return nil, l.wrap("read schema version", err)
	}
	switch {
	case v == 0:
		l.Close()
		return nil, l.wrap("open", fmt.Errorf("not a pitwall ledger (no schema): %w", fs.ErrNotExist))
	case v > schemaVersion():
		l.Close()
		return nil, l.wrap("open", fmt.Errorf("schema version %d is newer than this pitwall's %d; upgrade pitwall", v, schemaVersion()))
	case v < schemaVersion():
		l.Close()
		return nil, l.wrap("open", fmt.Errorf("schema version %d is older than this pitwall's %d; open it once for writing (pitwall run) to migrate it", v, schemaVersion()))
	}
	return l, nil
}

func (l *Ledger) openReader(abs string) error {
	r, err := sql.Open("sqlite", dsn(abs, url.Values{
		"mode":          {"ro"},
		"_busy_timeout": {fmt.Sprint(busyTimeoutMS)},
	}))
	if err != nil {
		return l.wrap("open reader", err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	if err := r.Ping(); err != nil {
		r.Close()
		return l.wrap("open reader", err)
	}
	l.r = r
	return nil
}

// dsn builds a file: URI, escaping the path so that '?', '#' and '%' in a
// folder name are not read as URI syntax.
func dsn(abs string, q url.Values) string {
	u := url.URL{Path: filepath.ToSlash(abs)}
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// Close closes the ledger. The writer closes last, so that it is the last
// connection and checkpoints the WAL into the database file.
func (l *Ledger) Close() error {
	var errs []error
	for _, s := range []*sql.Stmt{l.insertReq, l.startReq, l.finishReq} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	if l.r != nil {
		errs = append(errs, l.r.Close())
	}
	l.fixMu.Lock()
	if l.fix != nil {
		errs = append(errs, l.fix.Close())
		l.fix = nil
	}
	l.fixMu.Unlock()
	if l.w != nil {
		errs = append(errs, l.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return l.wrap("close", err)
	}
	return nil
}

// Path is the path the ledger was opened with.
func (l *Ledger) Path() string { return l.path }

func (l *Ledger) wrap(op string, err error) error {
	return fmt.Errorf("ledger %s: %s: %w", l.path, op, err)
}

// writer returns the write pool, or ErrReadOnly.
func (l *Ledger) writer(op string) (*sql.DB, error) {
	if l.w == nil {
		return nil, l.wrap(op, ErrReadOnly)
	}
	return l.w, nil
}

// schemaVersion is the version this build writes: one per migration.
func schemaVersion() int { return len(migrations) }

// migrations[i] moves the schema from version i to i+1. Append only: a
// released migration is never edited, since ledgers in the field ran it.
var migrations = []string{
	// 1: runs, requests, cells, verdicts.
	`
CREATE TABLE runs (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL,
	scoring_mode TEXT NOT NULL DEFAULT '',
	config_json  TEXT NOT NULL DEFAULT '',
	scoring_json TEXT NOT NULL DEFAULT '',
	models_json  TEXT NOT NULL DEFAULT 'null',
	tests_json   TEXT NOT NULL DEFAULT 'null',
	repeat       INTEGER NOT NULL DEFAULT 0,
	started_ms   INTEGER,
	ended_ms     INTEGER
);
CREATE INDEX runs_by_start ON runs (started_ms, id);

CREATE TABLE requests (
	id                INTEGER PRIMARY KEY,
	run_id            TEXT NOT NULL,
	purpose           TEXT NOT NULL,
	server            TEXT NOT NULL DEFAULT '',
	model             TEXT NOT NULL DEFAULT '',
	test              TEXT NOT NULL DEFAULT '',
	repeat            INTEGER NOT NULL DEFAULT 0,
	judge             TEXT NOT NULL DEFAULT '',
	sample            INTEGER NOT NULL DEFAULT 0,
	attempt           INTEGER NOT NULL DEFAULT 0,
	input             TEXT NOT NULL DEFAULT '',
	params            TEXT NOT NULL DEFAULT '',
	cache_key         TEXT NOT NULL DEFAULT '',
	batch_id          TEXT NOT NULL DEFAULT '',
	status            TEXT NOT NULL,
	output            TEXT NOT NULL DEFAULT '',
	reasoning         TEXT NOT NULL DEFAULT '',
	tool_calls        TEXT NOT NULL DEFAULT '',
	verdict           TEXT NOT NULL DEFAULT '',
	error_class       TEXT NOT NULL DEFAULT '',
	error             TEXT NOT NULL DEFAULT '',
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	ttft_us           INTEGER NOT NULL DEFAULT 0,
	latency_us        INTEGER NOT NULL DEFAULT 0,
	queued_ms         INTEGER,
	started_ms        INTEGER,
	ended_ms          INTEGER
);
CREATE INDEX requests_by_run ON requests (run_id);
-- Partial: most requests (inference, probes) carry no cache key.
CREATE INDEX requests_by_cache_key ON requests (cache_key, status) WHERE cache_key <> '';

CREATE TABLE cells (
	run_id            TEXT NOT NULL,
	model             TEXT NOT NULL,
	test              TEXT NOT NULL,
	repeat            INTEGER NOT NULL,
	status            TEXT NOT NULL DEFAULT '',
	server            TEXT NOT NULL DEFAULT '',
	output            TEXT NOT NULL DEFAULT '',
	reasoning         TEXT NOT NULL DEFAULT '',
	tool_calls        TEXT NOT NULL DEFAULT '',
	checks            TEXT NOT NULL DEFAULT '',
	error_class       TEXT NOT NULL DEFAULT '',
	error             TEXT NOT NULL DEFAULT '',
	attempts          INTEGER NOT NULL DEFAULT 0,
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	ttft_us           INTEGER NOT NULL DEFAULT 0,
	latency_us        INTEGER NOT NULL DEFAULT 0,
	tokens_per_sec    REAL NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, model, test, repeat)
);

CREATE TABLE verdicts (
	run_id     TEXT NOT NULL,
	model      TEXT NOT NULL,
	test       TEXT NOT NULL,
	repeat     INTEGER NOT NULL,
	judge      TEXT NOT NULL,
	verdict    TEXT NOT NULL DEFAULT '',
	score      REAL NOT NULL DEFAULT 0,
	agreement  REAL NOT NULL DEFAULT 0,
	detail     TEXT NOT NULL DEFAULT '',
	error      TEXT NOT NULL DEFAULT '',
	source     TEXT NOT NULL DEFAULT '',
	latency_ms INTEGER NOT NULL DEFAULT 0,
	at_ms      INTEGER,
	PRIMARY KEY (run_id, model, test, repeat, judge)
);
`,
	// 2: why a run ended as it did (a failed run's reason).
	`ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT '';`,
	// 3: the process running a run and its heartbeat, so a run whose
	// process died can be told from one still running (liveness.go).
	`
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN heartbeat_ms INTEGER;
-- Runs left running by earlier builds get their last sign of life as a
-- heartbeat and no owner, so rule 3 of goneWhy can close the dead ones.
UPDATE runs SET heartbeat_ms = nullif(max(coalesce(started_ms, 0), coalesce((
	SELECT max(max(coalesce(q.queued_ms, 0), coalesce(q.started_ms, 0), coalesce(q.ended_ms, 0)))
	FROM requests q WHERE q.run_id = runs.id), 0)), 0)
WHERE status = 'running';
`,
	// 4: a judge request names the cell it judges: the tested model beside
	// test and repeat (model is the judge's), and the judging round.
	`
ALTER TABLE requests ADD COLUMN candidate_model TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
`,
	// 5: the caches answer with the newest output, so the cache key index
	// orders by end time.
	`
DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, status, ended_ms) WHERE cache_key <> '';
`,
}

// migrate brings the schema to schemaVersion in one transaction, so a crash
// mid-migration leaves the old version intact and the next Open retries.
func (l *Ledger) migrate() error {
	tx, err := l.w.Begin()
	if err != nil {
		return l.wrap("migrate", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var v int
	if err := tx.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return l.wrap("read schema version", err)
	}
	if v > schemaVersion() {
		return l.wrap("migrate", fmt.Errorf("schema version %d is newer than this pitwall's %d; upgrade pitwall", v, schemaVersion()))
	}
	if v == schemaVersion() {
		return nil
	}
	for i := v; i < schemaVersion(); i++ {
		if _, err := tx.Exec(migrations[i]); err != nil {
			return l.wrap(fmt.Sprintf("migrate to schema version %d", i+1), err)
		}
	}
	// user_version lives in the database header, which the transaction
	// covers: the tables and the version commit together or not at all.
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion())); err != nil {
		return l.wrap("set schema version", err)
	}
	if err := tx.Commit(); err != nil {
		return l.wrap("migrate", err)
	}
	return nil
}

// msOrNull stores a zero time as NULL, so "not yet" stays distinct from 1970.
func msOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func timeFromMS(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64)
}

func usFromDuration(d time.Duration) int64 { return d.Microseconds() }

func durationFromUS(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
