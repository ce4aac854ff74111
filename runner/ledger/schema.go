package ledger

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// The schema is its migrations, one SQL file each per engine, side by side
// under migrations/ (soft-serve's pkg/db/migrate is the model):
//
//	migrations/sqlite/NNNN_name.sql    moves a SQLite ledger from NNNN-1 to NNNN
//	migrations/postgres/NNNN_name.sql  the same for PostgreSQL
//
// Each engine's file says its statements in its own words; the only thing
// done to them at run time is PostgreSQL's placeholders (? → $n, dialect.go).
// PostgreSQL ledgers begin at 0008_base.sql, schema 8 in one piece: a
// fresh database runs it and the files after it, one of an earlier build
// the files after its version. Append only: a released migration is never
// edited, since ledgers in the field ran it; a migration that must
// transform data in ways SQL cannot say goes in Go beside the files.
//
//go:embed migrations
var migrationFiles embed.FS

// migration is one file: the version it moves the schema to, and its text.
type migration struct {
	version int
	name    string
	sql     string
}

// migrationList is an engine's migrations in version order.
type migrationList []migration

var (
	sqliteMigrations   = loadMigrations("sqlite")
	postgresMigrations = loadMigrations("postgres")
)

// schemaVersion is the version this build writes: SQLite's last migration,
// which PostgreSQL's last must equal (TestBothEnginesMigrateToOneVersion).
func schemaVersion() int { return sqliteMigrations[len(sqliteMigrations)-1].version }

// after is the migrations past version v, in order.
func (ms migrationList) after(v int) migrationList {
	for i, m := range ms {
		if m.version > v {
			return ms[i:]
		}
	}
	return nil
}

// loadMigrations reads migrations/<engine>: names NNNN_name.sql, versions
// rising by one from the first.
func loadMigrations(engine string) migrationList {
	dir := path.Join("migrations", engine)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		panic(err)
	}
	var ms migrationList
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			panic(fmt.Sprintf("migration %s/%s: want NNNN_name.sql", dir, e.Name()))
		}
		if len(ms) > 0 && v != ms[len(ms)-1].version+1 {
			panic(fmt.Sprintf("migration %s/%s: version %d after %d", dir, e.Name(), v, ms[len(ms)-1].version))
		}
		b, err := migrationFiles.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			panic(err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	if len(ms) == 0 {
		panic("no migrations in " + dir)
	}
	return ms
}

// migrate brings the schema to schemaVersion in one transaction, so a crash
// mid-migration leaves the old version intact and the next Open retries.
func (l *Ledger) migrate() error {
	// A lock held longer than a commit takes (a pitwall stopped mid-write)
	// is said in seconds, not after a writer's full wait.
	if _, err := l.w.Exec(fmt.Sprintf("PRAGMA busy_timeout = %d", openBusyMS)); err != nil {
		return l.wrap("open", err)
	}
	defer l.w.Exec(fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeoutMS)) //nolint:errcheck // the DSN's value, set again
	tx, err := l.w.Begin()
	if err != nil {
		return l.wrap("open", l.explain(err))
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
	for _, m := range sqliteMigrations.after(v) {
		if _, err := tx.Exec(m.sql); err != nil {
			return l.wrap(fmt.Sprintf("migrate to schema version %d", m.version), err)
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
