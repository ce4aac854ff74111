package ledger

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
)

// Sessions that cannot hold a team hostage. A pitwall stopped by ctrl+z
// inside a transaction, or whose host vanished from the network, must not
// keep a run's row locked for everyone else: every session pitwall opens
// says, unless its URL (or PGOPTIONS, PGAPPNAME) says otherwise,
//
//   - idle_in_transaction_session_timeout (pgIdleInTx): the server ends a
//     session that sits in a transaction doing nothing, and its locks go;
//   - lock_timeout (pgLockTimeout): a statement waits that long at most for
//     another session's lock (a take-over then fails with ErrLocked, an
//     owner's write tries again, writer.go);
//   - application_name: "pitwall pid N on HOST", so that an administrator
//     looking at pg_stat_activity knows whose session it is;
//
// and its TCP connection keeps alive every pgKeepAlive, so that a server
// gone from the network is noticed in about a minute, not two hours.
// Cancelling a statement's context asks the server to cancel it, which
// leaves the connection usable (pgx's default closes it).

const (
	pgKeepAlive   = 15 * time.Second
	pgIdleInTx    = 60 * time.Second
	pgLockTimeout = 10 * time.Second
)

// pgConnector is the connector of every pool a PostgreSQL ledger opens.
func pgConnector(url string, self Owner) (driver.Connector, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	sessionDefaults(cfg, self)
	return stdlib.GetConnector(*cfg), nil
}

// openPG opens a pool on url with pitwall's session settings.
func openPG(url string, self Owner) (*sql.DB, error) {
	c, err := pgConnector(url, self)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// sessionDefaults sets pitwall's session settings on cfg where the user's
// own (the URL's parameters, its options, PG* variables) leave them unset.
func sessionDefaults(cfg *pgx.ConnConfig, self Owner) {
	set := func(name, value string) {
		if _, ok := cfg.RuntimeParams[name]; ok || setInOptions(cfg.RuntimeParams["options"], name) {
			return
		}
		cfg.RuntimeParams[name] = value
	}
	set("application_name", appName(self))
	set("idle_in_transaction_session_timeout", fmt.Sprint(pgIdleInTx.Milliseconds()))
	set("lock_timeout", fmt.Sprint(pgLockTimeout.Milliseconds()))
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: pgKeepAlive, Interval: pgKeepAlive, Count: 4}}
	cfg.DialFunc = d.DialContext
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		// The deadline stays as the last resort, for a server that does
		// not answer the cancel.
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 5 * time.Second}
	}
}

// appName is the application_name of this process's sessions; PostgreSQL
// keeps 63 bytes of it.
func appName(o Owner) string {
	s := fmt.Sprintf("pitwall pid %d on %s", o.PID, o.Host)
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}

// setInOptions says whether a libpq options string ("-c name=value
// --name=value ...") sets name; PostgreSQL reads - in a name as _.
func setInOptions(options, name string) bool {
	if options == "" {
		return false
	}
	n := strings.ReplaceAll(regexp.QuoteMeta(name), "_", "[_-]")
	return regexp.MustCompile(`(?i)(^|\s)(-c\s*|--)` + n + `\s*=`).MatchString(options)
}

// How a PostgreSQL error is taken, once, where the writer meets it.
type pgFailure uint8

const (
	// pgFails: a statement's own failure (a constraint, a type): the
	// write fails, the others of its batch are tried alone.
	pgFails pgFailure = iota
	// pgTransient: the connection was lost (a restart, a terminated
	// backend, a network gone) or another session's lock was in the way:
	// the batch is tried again, on a connection made again.
	pgTransient
	// pgCannotWrite: this session may not write at all (a read-only
	// server or transaction, a privilege taken away): every write fails
	// at once, saying why.
	pgCannotWrite
)

// classify says how the writer takes err.
func classify(err error) pgFailure {
	if err == nil {
		return pgFails
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "25006" || pe.Code == "42501":
			return pgCannotWrite
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutdown, crash, starting up
			pe.Code == "53300",                     // too many connections
			pe.Code == "55P03",                     // lock_timeout
			pe.Code == "40P01", pe.Code == "40001": // deadlock, serialization
			return pgTransient
		case strings.HasPrefix(pe.Code, "28"), pe.Code == "3D000":
			return pgFails // a login refused, a database gone: no retry mends them
		case strings.EqualFold(pe.Severity, "FATAL") || strings.EqualFold(pe.Severity, "PANIC"):
			return pgTransient // the server ended the session (idle in transaction, say)
		}
		return pgFails
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &ne), errors.As(err, &ce),
		pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return pgTransient
	}
	return pgFails
}

// isLockTimeout says err is a statement that waited lock_timeout for
// another session's lock.
func isLockTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// lockedError is a take-over that met another session's lock on its run
// (the owner, or another take-over, inside a transaction: perhaps a
// process stopped there) and waited lock_timeout for it: try again in a
// moment; the server ends a session idle in a transaction within
// pgIdleInTx. It wraps ErrLocked.
func lockedError(run string) error {
	return fmt.Errorf("run %s %w: another session holds its lock (a pitwall inside a write of it, perhaps stopped there by ctrl+z or a debugger) past lock_timeout; try again in a minute, once the server has ended a session left idle in a transaction",
		run, ErrLocked)
}
