package ledger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestPgTextKeepsWhatTEXTHoldsAndMapsTheRest(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"overloaded", "overloaded"},
		{"ünïcode ✓", "ünïcode ✓"},
		{"over\x00loaded", "over\u2400loaded"},
		{"bad \xff\xfe bytes", "bad \uFFFD bytes"},
		{"\x00\xff", "\u2400\uFFFD"},
	}
	for _, tt := range tests {
		if got := pgText(tt.in); got != tt.want {
			t.Errorf("pgText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	args := []any{"a\x00", 1, []byte("b\x00"), nil}
	got := pgDialect.args(args)
	if got[0] != "a\u2400" || got[1] != 1 || string(got[2].([]byte)) != "b\x00" || got[3] != nil {
		t.Errorf("pgDialect.args = %q: want the string mapped, the bytes as given", got)
	}
	if args[0] != "a\x00" {
		t.Errorf("pgDialect.args changed its caller's slice: %q", args)
	}
	if got := sqliteDialect.args(args); got[0] != "a\x00" {
		t.Errorf("SQLite's args changed a string: %q", got)
	}
}

// INSERT OR REPLACE has no counterpart on PostgreSQL (and on SQLite would
// move a row to the end of its table's order): the ledger says upserts
// (INSERT ... ON CONFLICT DO UPDATE) instead, and no statement of the
// package says it; nor any other form only one engine reads as meant,
// outside dialect.go.
func TestNoStatementInsertsOrReplaces(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			u := strings.Join(strings.Fields(strings.ToUpper(s)), " ")
			if strings.Contains(u, "OR REPLACE") || strings.Contains(u, "REPLACE INTO") {
				t.Errorf("%s: a statement says INSERT OR REPLACE: write an upsert (ON CONFLICT ... DO UPDATE)", fset.Position(lit.Pos()))
			}
			// Said alike by both engines only when written out: SQLite
			// sorts NULL last under DESC, PostgreSQL first.
			if strings.Count(u, " DESC") != strings.Count(u, " DESC NULLS LAST") {
				t.Errorf("%s: a statement orders by DESC without NULLS LAST, which the engines read apart", fset.Position(lit.Pos()))
			}
			// SQLite's own words belong in dialect.go, beside PostgreSQL's.
			if name != "dialect.go" {
				for _, w := range []string{"OR IGNORE", "JSON_EACH", "TYPEOF(", "GREATEST("} {
					if strings.Contains(u, w) {
						t.Errorf("%s: a statement says %s, which one engine only knows: write it for each in dialect.go", fset.Position(lit.Pos()), w)
					}
				}
			}
			return true
		})
	}
}

// PostgreSQL's one change at run time: placeholders, outside quotes.
func TestRebindNumbersPlaceholdersOutsideQuotes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`UPDATE t SET a = ?, b = ? WHERE c = ?`, `UPDATE t SET a = $1, b = $2 WHERE c = $3`},
		{`SELECT ?2 WHERE x = ?1 OR y = ?1`, `SELECT $2 WHERE x = $1 OR y = $1`},
		{`SELECT '?' || ? FROM t WHERE s = 'a?b'`, `SELECT '?' || $1 FROM t WHERE s = 'a?b'`},
		{`SELECT 'open`, `SELECT 'open`},
	} {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := sqliteDialect.sql(tt.in); got != tt.in {
			t.Errorf("SQLite's text of %q changed: %q", tt.in, got)
		}
	}
}
