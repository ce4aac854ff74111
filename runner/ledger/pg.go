package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"pitwall/internal/redact"
)

// PostgreSQL: a ledger a team shares. The same tables, with the same
// meaning, in PostgreSQL's types (BIGINT for INTEGER, DOUBLE PRECISION for
// REAL, BYTEA for BLOB and for the texts' bodies, which may hold bytes
// PostgreSQL's TEXT refuses); cache keys are TEXT, as given. Differences
// that show:
//
//   - The schema version is the one row of pitwall_schema (SQLite keeps it
//     in user_version). A database with tables but no pitwall_schema is
//     not pitwall's, and is refused (ErrNotPitwall) rather than written to.
//   - A fresh database is created at schema 8 in one piece
//     (migrations/postgres/0008_base.sql), then migrated by the files after
//     it (schema.go). Migrations take an advisory lock, so two processes
//     opening a fresh database at once migrate it once.
//   - Ids come from identity columns (a text piece's taken in blocks from
//     its sequence, batch.textIDs); cells and verdicts have a rowid
//     column of their own, so that "the order they were first put" reads
//     as in SQLite.
//   - The writer's statements of a group commit go to the server as one
//     pipeline (batch.send), not one round trip each.
//   - Strings TEXT cannot hold (a NUL, bytes that are not UTF-8) are
//     stored mapped (pgText); texts' bodies are bytes, whole.
//   - Durability is the server's: a commit returns once the server has it.
//   - Fencing holds across hosts: each transaction of the writer reads the
//     runs it holds FOR SHARE, and a take-over reads its run FOR UPDATE, so
//     a take-over waits for the owner's transaction under way and the next
//     one sees the new generation.

// ErrNotPitwall: the database has tables but none says it is a ledger.
var ErrNotPitwall = errors.New("is not a pitwall ledger")

// ErrUnreachable: the database server could not be reached or refused
// the connection (address, password, database name).
var ErrUnreachable = errors.New("cannot be reached")

// pgSchemaLock is the advisory lock migrations take.
const pgSchemaLock = 0x7069747761_6c6c // "pitwall"

// IsPostgres says whether a --db value names a PostgreSQL database (a
// postgres:// or postgresql:// URL). Any other URL scheme is an error, so
// that a URL is never taken for a file name; what has no scheme is a path.
func IsPostgres(s string) (bool, error) {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || !schemeRE.MatchString(scheme) {
		return false, nil
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return true, nil
	}
	return false, fmt.Errorf("ledger %s: %s:// is not a ledger pitwall can open: give a file path (SQLite) or a postgres:// URL", redact.URL(s), scheme)
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// pgConnectTimeout bounds the wait for a server that does not answer.
const pgConnectTimeout = 10 * time.Second

// openPostgres opens the PostgreSQL ledger at url: for writing (migrating
// it, and checking that this role may write it) or for reading.
func openPostgres(url string, write bool) (*Ledger, error) {
	l := newLedger(redact.URL(url))
	l.abs, l.d = url, pgDialect
	open := func(conns int) (db, error) {
		c, err := openPG(url, l.self)
		if err != nil {
			return db{}, l.wrap("open", fmt.Errorf("%w: %s", ErrUnreachable, redact.Text(err.Error())))
		}
		c.SetMaxOpenConns(conns)
		c.SetMaxIdleConns(conns)
		ctx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
		defer cancel()
		if err := c.PingContext(ctx); err != nil {
			c.Close()
			return db{}, l.wrap("open", l.pgExplain(err))
		}
		return db{c, pgDialect}, nil
	}
	var err error
	if l.r, err = open(readConns); err != nil {
		return nil, err
	}
	if !write {
		v, err := l.pgVersion(l.r)
		if err == nil && v == 0 {
			err = l.wrap("open", fmt.Errorf("not a pitwall ledger (no schema): %w", fs.ErrNotExist))
		}
		if err == nil {
			err = l.checkVersion(v, false)
		}
		if err != nil {
			l.Close()
			return nil, err
		}
		return l, nil
	}
	if l.w, err = open(1); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.pgMigrate(); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.pgCheckPrivileges(); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.prepare(); err != nil {
		l.Close()
		return nil, err
	}
	l.wr = newWriter(l)
	return l, nil
}

// checkVersion refuses a schema this build does not write: a newer one
// always, an older one for reading (writing migrates it).
func (l *Ledger) checkVersion(v int, write bool) error {
	switch {
	case v > schemaVersion():
		return l.wrap("open", fmt.Errorf("schema version %d is newer than this pitwall's %d; upgrade pitwall", v, schemaVersion()))
	case v < schemaVersion() && !write:
		return l.wrap("open", fmt.Errorf("schema version %d is older than this pitwall's %d; open it once for writing (pitwall run) to migrate it", v, schemaVersion()))
	}
	return nil
}

// pgVersion reads the schema version: 0 for a database without
// pitwall_schema and without tables; ErrNotPitwall for one with tables.
func (l *Ledger) pgVersion(q querier) (int, error) {
	var reg sql.NullString
	if err := q.QueryRow(`SELECT to_regclass('pitwall_schema')::text`).Scan(&reg); err != nil {
		return 0, l.wrap("read schema version", l.pgExplain(err))
	}
	if !reg.Valid {
		var n int
		err := q.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n)
		if err != nil {
			return 0, l.wrap("read schema version", l.pgExplain(err))
		}
		if n > 0 {
			return 0, l.wrap("open", fmt.Errorf("%w: its schema holds %d tables and no pitwall_schema; give pitwall a database (or a schema, ?search_path=) of its own", ErrNotPitwall, n))
		}
		return 0, nil
	}
	var v int
	if err := q.QueryRow(`SELECT version FROM pitwall_schema`).Scan(&v); err != nil {
		return 0, l.wrap("read schema version", l.pgExplain(err))
	}
	return v, nil
}

// pgMigrate brings the schema to schemaVersion in one transaction, under
// an advisory lock, so that two processes opening at once migrate once.
func (l *Ledger) pgMigrate() error {
	t, err := l.w.Begin()
	if err != nil {
		return l.wrap("open", l.pgExplain(err))
	}
	defer t.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := t.Exec(`SELECT pg_advisory_xact_lock(?)`, int64(pgSchemaLock)); err != nil {
		return l.wrap("migrate", l.pgExplain(err))
	}
	v, err := l.pgVersion(t)
	if err != nil {
		return err
	}
	if err := l.checkVersion(v, true); err != nil {
		return err
	}
	if v == schemaVersion() {
		return nil
	}
	// A fresh database runs the base (0008_base.sql), which makes
	// pitwall_schema, then the files after it.
	for _, m := range postgresMigrations.after(v) {
		if _, err := t.Tx.Exec(m.sql); err != nil {
			return l.wrap(fmt.Sprintf("migrate to schema version %d", m.version), l.pgExplain(err))
		}
	}
	if _, err := t.Exec(`UPDATE pitwall_schema SET version = ?`, schemaVersion()); err != nil {
		return l.wrap("set schema version", l.pgExplain(err))
	}
	if err := t.Commit(); err != nil {
		return l.wrap("migrate", l.pgExplain(err))
	}
	return nil
}

// pgCheckPrivileges refuses, at Open, a role that may read the ledger but
// not write it, rather than failing at a run's first write.
func (l *Ledger) pgCheckPrivileges() error {
	var ro string
	if err := l.w.QueryRow(`SHOW transaction_read_only`).Scan(&ro); err != nil {
		return l.wrap("open", l.pgExplain(err))
	}
	if ro == "on" {
		return l.wrap("open", fmt.Errorf("%w: the server takes no writes in this session (a standby, or default_transaction_read_only): give pitwall the primary's URL, or a database and role that may write", ErrNotWritable))
	}
	var missing []string
	for _, table := range []string{"runs", "requests", "cells", "verdicts", "texts"} {
		var ok bool
		// Each apart: a list of privileges asks for any of them.
		err := l.w.QueryRow(`SELECT has_table_privilege(?1, 'SELECT') AND has_table_privilege(?1, 'INSERT')
			AND has_table_privilege(?1, 'UPDATE')`, table).Scan(&ok)
		if err != nil {
			return l.wrap("open", l.pgExplain(err))
		}
		if !ok {
			missing = append(missing, table)
		}
	}
	if len(missing) > 0 {
		return l.wrap("open", fmt.Errorf("%w: this role lacks SELECT, INSERT or UPDATE on %s; GRANT them, or pass --db with another database",
			ErrNotWritable, strings.Join(missing, ", ")))
	}
	return nil
}

// pgExplain says a PostgreSQL error in pitwall's words: unreachable, a
// refused login, a missing database, missing privileges. Its text is
// masked: a driver's message may quote the URL.
func (l *Ledger) pgExplain(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return fmt.Errorf("%w: the server refused the login (%s): check the user and password in the URL (or PGPASSWORD, ~/.pgpass)", ErrUnreachable, pe.Message)
		case pe.Code == "3D000":
			return fmt.Errorf("%w: %s: create it (createdb) or fix the URL", ErrUnreachable, pe.Message)
		case pe.Code == "25006":
			return fmt.Errorf("%w: %s: the server takes no writes in this session (a standby, or default_transaction_read_only)", ErrNotWritable, pe.Message)
		case pe.Code == "42501":
			return fmt.Errorf("%w: %s: GRANT the role what it needs, or pass --db with another database", ErrNotWritable, pe.Message)
		}
		return fmt.Errorf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ne) || errors.As(err, &ce) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: is the server up, and the host and port right?", ErrUnreachable, redact.Text(err.Error()))
	}
	return errors.New(redact.Text(err.Error()))
}
