package ledger

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// One SQL text per statement, written in SQLite's words, and one place
// that says it in PostgreSQL's: every statement the ledger runs goes
// through a db or tx below, which hands it to its dialect's sql first.
// SQLite's is the text as written; PostgreSQL's is the text rewritten
// once (and cached) by the rules of pgRewrite:
//
//   - placeholders: ? and ?N become $N;
//   - max(a, b, ...) and min(a, b, ...) with more than one argument (SQLite's
//     scalar forms) become greatest and least;
//   - DESC becomes DESC NULLS LAST (SQLite sorts NULL first, PostgreSQL last);
//   - INSERT OR IGNORE becomes INSERT ... ON CONFLICT DO NOTHING;
//   - a few whole fragments with no counterpart (pgFragments) are replaced.
//
// INSERT OR REPLACE has no rule: write an upsert (INSERT ... ON CONFLICT
// DO UPDATE), which both say alike (TestNoStatementInsertsOrReplaces).
// String arguments are mapped by pgText on PostgreSQL.
//
// A statement that needs more than that is written twice, next to each
// other, and picked with Ledger.dialect (pg): the schema, which PostgreSQL
// creates at pgBaseVersion in one piece, is the one such place (pg.go).
// A new migration's DDL is rewritten by pgDDL (INTEGER → BIGINT, REAL →
// DOUBLE PRECISION, BLOB → BYTEA) unless pgMigrations gives its own text.

// dialect is how one backend says SQL.
type dialect struct {
	name string
	pg   bool
	// forUpdate and forShare lock the rows a SELECT reads, where the
	// backend locks rows (PostgreSQL); SQLite's write transaction already
	// holds the whole database.
	forUpdate, forShare string
	cache               sync.Map // SQLite text → this dialect's
}

var (
	sqliteDialect = &dialect{name: "sqlite"}
	pgDialect     = &dialect{name: "postgres", pg: true, forUpdate: " FOR UPDATE", forShare: " FOR SHARE"}
)

// sql is q in this dialect's words.
func (d *dialect) sql(q string) string {
	if !d.pg {
		return q
	}
	if v, ok := d.cache.Load(q); ok {
		return v.(string)
	}
	out := pgRewrite(q)
	d.cache.Store(q, out)
	return out
}

// pgFragments are SQLite fragments without a rule, and what PostgreSQL
// says for them.
var pgFragments = []struct{ sqlite, pg string }{
	// Cache keys are TEXT in PostgreSQL (keyArg): read as stored.
	{cacheKeyColumn, "cache_key"},
	{"SELECT value FROM json_each(?)", "SELECT jsonb_array_elements_text(?::jsonb)::bigint"},
}

// pgRewrite says q in PostgreSQL's words (see the rules above).
func pgRewrite(q string) string {
	for _, f := range pgFragments {
		q = strings.ReplaceAll(q, f.sqlite, f.pg)
	}
	if rest, ok := cutPrefixFold(strings.TrimSpace(q), "INSERT OR IGNORE"); ok {
		q = "INSERT" + rest + " ON CONFLICT DO NOTHING"
	}
	q = scalarMinMax(q)
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(q[i+1:], '\'')
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '?':
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
		case (c == 'D' || c == 'd') && word(q, i, "DESC"):
			b.WriteString(q[i:i+4] + " NULLS LAST")
			i += 3
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// word says whether q holds the keyword w at i, standing alone.
func word(q string, i int, w string) bool {
	if i+len(w) > len(q) || !strings.EqualFold(q[i:i+len(w)], w) {
		return false
	}
	return (i == 0 || !identByte(q[i-1])) && (i+len(w) == len(q) || !identByte(q[i+len(w)]))
}

func identByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

// scalarMinMax turns SQLite's max(a, b) and min(a, b) (more than one
// argument: the scalar forms) into greatest and least.
func scalarMinMax(q string) string {
	for _, f := range []struct{ from, to string }{{"max", "greatest"}, {"min", "least"}} {
		var b strings.Builder
		for i := 0; i < len(q); i++ {
			if word(q, i, f.from) && i+len(f.from) < len(q) && q[i+len(f.from)] == '(' {
				if commas(q[i+len(f.from):]) > 0 {
					b.WriteString(f.to)
					i += len(f.from) - 1
					continue
				}
			}
			b.WriteByte(q[i])
		}
		q = b.String()
	}
	return q
}

// commas counts the top-level commas inside the parenthesis s opens.
func commas(s string) int {
	depth, n := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return n
			}
		case ',':
			if depth == 1 {
				n++
			}
		case '\'':
			if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
				i += j + 1
			}
		}
	}
	return n
}

// pgDDL says a migration written for SQLite in PostgreSQL's types.
func pgDDL(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		switch {
		case word(q, i, "INTEGER"):
			b.WriteString("BIGINT")
			i += len("INTEGER") - 1
		case word(q, i, "REAL"):
			b.WriteString("DOUBLE PRECISION")
			i += len("REAL") - 1
		case word(q, i, "BLOB"):
			b.WriteString("BYTEA")
			i += len("BLOB") - 1
		default:
			b.WriteByte(q[i])
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
