package ledger

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Every statement the ledger runs is written once where both engines say
// it alike (ON CONFLICT, DESC NULLS LAST, which is SQLite's own order),
// and twice, side by side in a dialect below, where they do not. The one
// change made at run time is PostgreSQL's placeholders: ? and ?N become $N
// (rebind). String arguments are mapped by pgText on PostgreSQL. The
// schema is the migration files, one per engine (schema.go).

// dialect is how one backend says SQL.
type dialect struct {
	name string
	pg   bool
	// forUpdate and forShare lock the rows a SELECT reads, where the
	// backend locks rows (PostgreSQL); SQLite's write transaction already
	// holds the whole database.
	forUpdate, forShare string
	// activity is the latest time any request of run ?1 was queued,
	// started or ended: its last sign of life besides the heartbeat.
	activity string
	// interruptEnd is the end a reconcile gives run ?1: its heartbeat or
	// its last activity, whichever is later.
	interruptEnd string
	// textsByID reads the bodies of a JSON array of ids, each by its
	// primary key.
	textsByID string
	cache     sync.Map // text as written → rebound
}

var (
	sqliteDialect = &dialect{
		name:         "sqlite",
		activity:     sqliteActivity,
		interruptEnd: `max(heartbeat_ms, (` + sqliteActivity + `))`,
		textsByID:    `SELECT id, body FROM texts WHERE id IN (SELECT value FROM json_each(?))`,
	}
	pgDialect = &dialect{
		name: "postgres", pg: true, forUpdate: " FOR UPDATE", forShare: " FOR SHARE",
		activity:     pgActivity,
		interruptEnd: `greatest(heartbeat_ms, (` + pgActivity + `))`,
		textsByID:    `SELECT id, body FROM texts WHERE id IN (SELECT jsonb_array_elements_text(?::jsonb)::bigint)`,
	}
)

// SQLite's scalar max is PostgreSQL's greatest.
const (
	sqliteActivity = `SELECT coalesce(max(max(coalesce(queued_ms, 0), coalesce(started_ms, 0),
	coalesce(ended_ms, 0))), 0) FROM requests WHERE run_id = ?1`
	pgActivity = `SELECT coalesce(max(greatest(coalesce(queued_ms, 0), coalesce(started_ms, 0),
	coalesce(ended_ms, 0))), 0) FROM requests WHERE run_id = ?1`
)

// sql is q in this dialect's words: as written on SQLite, its
// placeholders rebound on PostgreSQL (once, cached).
func (d *dialect) sql(q string) string {
	if !d.pg {
		return q
	}
	if v, ok := d.cache.Load(q); ok {
		return v.(string)
	}
	out := rebind(q)
	d.cache.Store(q, out)
	return out
}

// rebind says q's placeholders as PostgreSQL does: ? as the next $N, ?N
// as $N; quoted strings are left as they are.
func rebind(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\'':
			j := strings.IndexByte(q[i+1:], '\'')
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(q[i+1 : j])
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pgText is s as PostgreSQL's TEXT can hold it. TEXT refuses NUL and
// bytes that are not UTF-8, which a server's error message, a test id or
// a model name may hold all the same (SQLite keeps them as given): there
// a NUL is stored as ␀ (U+2400) and each run of bad bytes as U+FFFD, so
// that such a string fails no write. Texts (replies, prompts, details)
// are stored as bytes (BYTEA), whole. Every string argument goes through
// it, reads' too, so that a row is found by the string it was written
// with.
func pgText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\u2400")
}

// storedKey is k as this dialect stores and reads it back (pgText).
func (d *dialect) storedKey(k CellKey) CellKey {
	if d.pg {
		k.Model, k.Test = pgText(k.Model), pgText(k.Test)
	}
	return k
}

// args are a statement's arguments in this dialect's terms: on
// PostgreSQL, strings as pgText says (in a copy, if any changes).
func (d *dialect) args(args []any) []any {
	if !d.pg {
		return args
	}
	copied := false
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			continue
		}
		if t := pgText(s); t != s {
			if !copied {
				args, copied = append([]any(nil), args...), true
			}
			args[i] = t
		}
	}
	return args
}

// db is a *sql.DB that speaks its dialect: the ledger's connections.
type db struct {
	*sql.DB
	d *dialect
}

func (c db) Exec(q string, args ...any) (sql.Result, error) {
	return c.DB.Exec(c.d.sql(q), c.d.args(args)...)
}
func (c db) Query(q string, args ...any) (*sql.Rows, error) {
	return c.DB.Query(c.d.sql(q), c.d.args(args)...)
}
func (c db) QueryRow(q string, args ...any) *sql.Row {
	return c.DB.QueryRow(c.d.sql(q), c.d.args(args)...)
}
func (c db) Prepare(q string) (*sql.Stmt, error) { return c.DB.Prepare(c.d.sql(q)) }
func (c db) Begin() (tx, error) {
	t, err := c.DB.Begin()
	return tx{t, c.d}, err
}
func (c db) BeginTx(ctx context.Context, opts *sql.TxOptions) (tx, error) {
	t, err := c.DB.BeginTx(ctx, opts)
	return tx{t, c.d}, err
}

// snapshot is the isolation under which a transaction's reads all see
// one state of the ledger: SQLite's every transaction (its default);
// PostgreSQL's repeatable read (its default, read committed, gives each
// statement a snapshot of its own).
func (d *dialect) snapshot() sql.IsolationLevel {
	if d.pg {
		return sql.LevelRepeatableRead
	}
	return sql.LevelDefault
}

// tx is a *sql.Tx that speaks its dialect.
type tx struct {
	*sql.Tx
	d *dialect
}

func (t tx) Exec(q string, args ...any) (sql.Result, error) {
	return t.Tx.Exec(t.d.sql(q), t.d.args(args)...)
}
func (t tx) Query(q string, args ...any) (*sql.Rows, error) {
	return t.Tx.Query(t.d.sql(q), t.d.args(args)...)
}
func (t tx) QueryRow(q string, args ...any) *sql.Row {
	return t.Tx.QueryRow(t.d.sql(q), t.d.args(args)...)
}
func (t tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.d.sql(q), t.d.args(args)...)
}
func (t tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.d.sql(q), t.d.args(args)...)
}
