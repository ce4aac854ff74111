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
//     Input and Params are the JSON text the caller gives.
//   - Since schema 6 a row's long texts (a request's input, params, output,
//     reasoning, tool calls; a cell's output, reasoning, tool calls,
//     checks; a verdict's detail) are stored once in texts and referenced
//     from the column's _ref twin, the text column left empty; a NULL _ref
//     means the text is in the column (rows of older schemas, empty texts).
//     texts.go says how a text is cut and referenced. Texts are never
//     compressed or escaped: a string in the ledger is in its file's bytes.
//   - A cache key that is a SHA-256 in lower-case hex is stored as its 32
//     bytes (a BLOB); reads give it back in hex.
//
// Durability: the database is in WAL mode with synchronous=NORMAL. A commit
// appends its frames to the WAL with write(2) before it returns, so what
// it holds is in the kernel's page cache and survives the process being
// killed at any point (SIGKILL, panic, OOM). The WAL is not fsynced at each
// commit, so a power loss or kernel crash may roll back the last few
// commits, never corrupt the file. Writes are committed in batches by the
// writer (writer.go); what a write's caller may count on, and when, is
// said there and in docs/architecture.md ("The ledger").

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
	// ErrTakenOver: a write of a run's owner after another process resumed
	// the run (fence.go): it wrote nothing, and this process must stop
	// sending for the run. Errors that wrap it are a *TakenOverError.
	ErrTakenOver = errors.New("run was taken over by another process")
)

// busyTimeoutMS bounds how long a statement waits for another process's
// lock (a second pitwall on the same ledger, a checkpoint) before failing.
const busyTimeoutMS = 10000

// openBusyMS bounds Open's wait for the write lock it migrates under.
const openBusyMS = 3000

// readConns is the size of the read pool; reads never block the writer in
// WAL mode, so a few are enough for the UI, export and the runner together.
const readConns = 4

// Ledger is an open ledger. Its methods are safe for concurrent use.
type Ledger struct {
	path string
	abs  string
	// w has exactly one connection, so every write is serialised in this
	// process and no two of our own writes ever contend for SQLite's lock.
	// Only the writer (writer.go) writes through it, after Open's migration.
	// It and wr are nil for a ledger opened read-only.
	w     db
	wr    *writer
	stmts [numStmts]*sql.Stmt
	// pgStmts are the writer's statements in PostgreSQL's words, sent
	// through pgx's pipeline (batch.send) rather than database/sql.
	pgStmts [numStmts]string
	// fenceStmt is fenceSQL prepared on the writer's connection (SQLite;
	// PostgreSQL's reads it FOR SHARE, in the batch's transaction).
	fenceStmt *sql.Stmt
	r         db
	// d is how the backend says SQL (dialect.go): SQLite's, or
	// PostgreSQL's for a postgres:// URL (pg.go).
	d     *dialect
	reads [numReads]*sql.Stmt // prepared on r: the reads the runner makes per cell
	// sized are reads of many keys at once, prepared on r by their text,
	// one for each of the few sizes a read pads its keys to (sizedRead).
	sized map[string]*sql.Stmt

	// What liveness is judged with (see liveness.go); tests replace them.
	self Owner
	now  func() time.Time
	gone func(Owner) (why string, checked bool)

	readMu sync.Mutex

	// fix writes reconciles for a ledger opened read-only (see fixer).
	fixMu     sync.Mutex
	fix       db
	fixBusyMS int

	// reconnectFor bounds the writer's tries to write again on a
	// connection made again (PostgreSQL, reconnect.go); tests shorten it.
	reconnectFor time.Duration
}

func newLedger(path string) *Ledger {
	return &Ledger{path: path, d: sqliteDialect, self: self(), now: time.Now, gone: processGone, fixBusyMS: fixerBusyMS,
		reconnectFor: ReconnectFor}
}

// Open opens the ledger at path for reading and writing, creating it and
// its parent folders if needed and migrating its schema to this build's.
//
// A postgres:// or postgresql:// URL opens a PostgreSQL database instead
// (pg.go); another URL scheme is refused rather than taken for a file name.
func Open(path string) (*Ledger, error) {
	switch pg, err := IsPostgres(path); {
	case err != nil:
		return nil, err
	case pg:
		return openPostgres(path, true)
	}
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
	if err := checkWritable(abs); err != nil {
		return nil, l.wrap("open", err)
	}
	w, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_busy_timeout": {fmt.Sprint(busyTimeoutMS)},
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		// BEGIN IMMEDIATE takes the write lock up front, so a migration
		// racing another process waits on busy_timeout instead of failing
		// when it upgrades a read lock.
		"_txlock": {"immediate"},
		// A page cache of 4 MiB (SQLite's pages count in the process's
		// peak, beside Go's heap) and a checkpoint every 16,000 pages of
		// WAL, so that an index page many commits change is written once:
		// the sizes the binary benchmarks chose (docs/performance.md). The
		// WAL is checkpointed into the database and removed as the ledger
		// closes.
		"_pragma": {"cache_size(-4096)", "wal_autocheckpoint(16000)"},
	}))
	if err != nil {
		return nil, l.wrap("open", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	l.w = db{w, l.d}
	if err := l.setUp(abs); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Ledger) setUp(abs string) error {
	var mode string
	if err := l.w.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		return l.wrap("open", l.explain(err))
	}
	if !strings.EqualFold(mode, "wal") {
		return l.wrap("open", fmt.Errorf("journal_mode is %q, not wal (is the folder on a network filesystem?)", mode))
	}
	if err := l.checkIntegrity(); err != nil {
		return err
	}
	if err := l.migrate(); err != nil {
		return err
	}
	if err := l.openReader(abs); err != nil {
		return err
	}
	if err := l.prepare(); err != nil {
		return err
	}
	l.wr = newWriter(l)
	return nil
}

// OpenReadOnly opens an existing ledger for reading only, for `runs`,
// `show` and `export` while another process may be writing to it. It never
// creates or migrates: a missing file is an error wrapping fs.ErrNotExist.
// Its write methods fail with ErrReadOnly. One thing is written all the
// same: a run found interrupted is reconciled on disk where the file can
// be written (reconcile.go), and only shown so where it cannot.
func OpenReadOnly(path string) (*Ledger, error) {
	switch pg, err := IsPostgres(path); {
	case err != nil:
		return nil, err
	case pg:
		return openPostgres(path, false)
	}
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
	err := l.openReaderWith(abs, url.Values{"mode": {"ro"}, "_busy_timeout": {fmt.Sprint(busyTimeoutMS)}, "_pragma": {"cache_size(-512)"}})
	if isReadOnlyDB(err) {
		// A reader of a WAL database writes the -shm file beside it: in a
		// folder it cannot write, the file is read as it is on disk
		// (immutable: no locks, no WAL), since no one else can be writing
		// it there either.
		err = l.openReaderWith(abs, url.Values{"mode": {"ro"}, "immutable": {"1"}})
	}
	return err
}

func (l *Ledger) openReaderWith(abs string, q url.Values) error {
	r, err := sql.Open("sqlite", dsn(abs, q))
	if err != nil {
		return l.wrap("open reader", err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	if err := r.Ping(); err != nil {
		r.Close()
		return l.wrap("open reader", l.explain(err))
	}
	l.r = db{r, l.d}
	return nil
}

// dsn builds a file: URI, escaping the path so that '?', '#' and '%' in a
// folder name are not read as URI syntax.
func dsn(abs string, q url.Values) string {
	u := url.URL{Path: filepath.ToSlash(abs)}
	return "file:" + u.EscapedPath() + "?" + q.Encode()
}

// Close commits the writes still queued, then closes the ledger; its error
// includes the asynchronous writes that failed and that Flush has not
// returned. The write connection closes last, so that it is the last
// connection and checkpoints the WAL into the database file.
func (l *Ledger) Close() error {
	var errs []error
	if l.wr != nil {
		errs = append(errs, l.wr.close())
	}
	for _, s := range append(append(l.stmts[:], l.reads[:]...), l.fenceStmt) {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	l.readMu.Lock()
	for _, s := range l.sized {
		errs = append(errs, s.Close())
	}
	l.sized = nil
	l.readMu.Unlock()
	if l.r.DB != nil {
		errs = append(errs, l.r.Close())
	}
	l.fixMu.Lock()
	if l.fix.DB != nil {
		errs = append(errs, l.fix.Close())
		l.fix = db{}
	}
	l.fixMu.Unlock()
	if l.w.DB != nil {
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

// Flush waits until every write queued before it (by any goroutine) has
// been committed or has failed, and its Ack has run, and returns the asynchronous writes that
// failed since the last Flush (their Acks heard it too). nil means every
// asynchronous write queued since the last Flush is committed: a crash of
// the process can no longer lose it. Close flushes too.
func (l *Ledger) Flush() error {
	if l.wr == nil {
		return nil
	}
	return l.wr.flush()
}

// caughtUp makes a read of this process see its own writes: it waits for
// the queued ones, or, given a cache key, for those that may change the
// key's answer. Their failures are left to Acks and Flush.
func (l *Ledger) caughtUp(key string) {
	if l.wr != nil {
		l.wr.wait(key)
	}
}

// write runs f as a synchronous write to run's rows, or fails with
// ErrReadOnly.
func (l *Ledger) write(run, op string, f func(b *batch) error) error {
	if l.wr == nil {
		return l.wrap(op, ErrReadOnly)
	}
	return l.wr.do(runOp{run, f})
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
