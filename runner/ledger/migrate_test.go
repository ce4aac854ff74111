package ledger

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fixtures are the ledgers of every earlier schema version, as SQL that
// builds one (testdata/schema/<engine>/vNN.sql), written by the builds
// that had them: SQLite files from schema 1, PostgreSQL databases from 8,
// its first.
func fixtures(t *testing.T) map[int]string {
	t.Helper()
	engine := "sqlite"
	if testPG != nil {
		engine = "postgres"
	}
	files, err := filepath.Glob(filepath.Join("testdata", "schema", engine, "v*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures of earlier schemas: %v", err)
	}
	out := map[int]string{}
	for _, f := range files {
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "v"), ".sql"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[v] = string(b)
	}
	return out
}

// rawOpen opens path on this pass's engine without pitwall's Open.
func rawOpen(t *testing.T, path string) *sql.DB {
	t.Helper()
	driver := "sqlite"
	if testPG != nil {
		driver = "pgx"
	}
	db, err := sql.Open(driver, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rows dumps a query's rows as text.
func rows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rs, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var sb strings.Builder
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		fmt.Fprintln(&sb, vals...)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

var spaces = regexp.MustCompile(`\s+`)

// catalog is the schema of db as the engine sees it: each table's
// columns (name, type, nullability, default, key), indexes, triggers and
// functions, in name order, so that a migrated ledger compares with a
// fresh one whatever order its columns were added in.
func catalog(t *testing.T, db *sql.DB) string {
	t.Helper()
	if testPG != nil {
		return rows(t, db, `SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, ''), is_identity, coalesce(identity_generation, '')
			FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, column_name`) +
			rows(t, db, `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`) +
			rows(t, db, `SELECT trigger_name, event_manipulation, action_timing, coalesce(action_condition, ''), action_statement
				FROM information_schema.triggers WHERE trigger_schema = current_schema() ORDER BY trigger_name, event_manipulation`) +
			rows(t, db, `SELECT proname, prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace ORDER BY proname`)
	}
	out := rows(t, db, `SELECT m.name, c.name, c.type, c."notnull", coalesce(c.dflt_value, ''), c.pk
		FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' ORDER BY m.name, c.name`)
	var sb strings.Builder
	for _, line := range strings.Split(rows(t, db, `SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master WHERE type <> 'table' ORDER BY name`), "\n") {
		fmt.Fprintln(&sb, strings.TrimSpace(spaces.ReplaceAllString(line, " ")))
	}
	return out + sb.String() + rows(t, db, `PRAGMA user_version`)
}

// kept is what every schema's rows hold: the columns of schema 1, less
// the cache key (a hex key becomes its bytes at schema 6).
func kept(t *testing.T, db *sql.DB) string {
	t.Helper()
	return rows(t, db, `SELECT id, name, status, models_json, tests_json, repeat, started_ms, ended_ms FROM runs ORDER BY id`) +
		rows(t, db, `SELECT id, run_id, purpose, model, test, input, params, status, output, queued_ms, started_ms, ended_ms FROM requests ORDER BY id`) +
		rows(t, db, `SELECT run_id, model, test, repeat, status, output, checks, attempts FROM cells ORDER BY run_id, model, test, repeat`) +
		rows(t, db, `SELECT run_id, model, test, repeat, judge, verdict, score, detail, at_ms FROM verdicts ORDER BY run_id, judge`)
}

// Every earlier schema this engine's ledgers were written at migrates to
// the schema a fresh ledger gets, keeping its rows, and is written to as
// usual after.
func TestALedgerOfEveryEarlierSchemaMigratesToTheFreshSchema(t *testing.T) {
	t.Parallel()
	fresh := testPath(t)
	l, err := Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	want := catalog(t, rawOpen(t, fresh))
	for v, script := range fixtures(t) {
		t.Run(fmt.Sprintf("schema %d", v), func(t *testing.T) {
			t.Parallel()
			path := testPath(t)
			db := rawOpen(t, path)
			if _, err := db.Exec(script); err != nil {
				t.Fatalf("load the fixture: %v", err)
			}
			before := kept(t, db)
			if before == "" {
				t.Fatal("the fixture holds no rows")
			}
			l, err := Open(path)
			if err != nil {
				t.Fatalf("open a ledger of schema %d: %v", v, err)
			}
			defer l.Close()
			if got := catalog(t, db); got != want {
				t.Errorf("schema after migrating from %d:\n%s\nwant a fresh ledger's:\n%s", v, got, want)
			}
			if after := kept(t, db); after != before {
				t.Errorf("rows changed by the migration:\nbefore\n%s\nafter\n%s", before, after)
			}
			// Schema 3 gave a running run its last sign of life as a heartbeat.
			beat := rows(t, db, `SELECT coalesce(heartbeat_ms, 0) FROM runs WHERE id = 'live'`)
			if wantBeat := map[bool]string{true: "2500\n", false: "0\n"}[v < 3]; beat != wantBeat {
				t.Errorf("the running run's heartbeat after migrating from %d: %q, want %q", v, beat, wantBeat)
			}
			// Schema 6 stored a SHA-256 cache key as its bytes.
			if testPG == nil {
				typ := rows(t, db, `SELECT typeof(cache_key) FROM requests WHERE id = 1`)
				if wantTyp := map[bool]string{true: "blob\n", false: "text\n"}[v < 6]; typ != wantTyp {
					t.Errorf("the hex cache key after migrating from %d is %q, want %q", v, typ, wantTyp)
				}
			}
			reqs, err := l.Requests("done")
			if err != nil || len(reqs) != 1 || reqs[0].Output != "four" || reqs[0].CacheKey != strings.Repeat("0f", 32) {
				t.Errorf("the migrated run's requests: %+v, %v", reqs, err)
			}
			if err := l.InsertRequests([]*Request{{RunID: "done", Purpose: PurposeInference, Model: "m", Test: "t2"}}); err != nil {
				t.Errorf("a write after migrating from %d: %v", v, err)
			}
		})
	}
}

// The two engines' files end at one version, and PostgreSQL's, which
// begin at its base, leave no version out after it.
func TestBothEnginesMigrateToOneVersion(t *testing.T) {
	t.Parallel()
	last := func(ms migrationList) int { return ms[len(ms)-1].version }
	if sq, pg := last(sqliteMigrations), last(postgresMigrations); sq != pg {
		t.Errorf("SQLite's migrations end at %d, PostgreSQL's at %d", sq, pg)
	}
	if sqliteMigrations[0].version != 1 || postgresMigrations[0].name != "base" {
		t.Errorf("first migrations: SQLite's %d_%s, PostgreSQL's %d_%s; want SQLite's 1, PostgreSQL's a base",
			sqliteMigrations[0].version, sqliteMigrations[0].name, postgresMigrations[0].version, postgresMigrations[0].name)
	}
	for _, m := range postgresMigrations[1:] {
		if s := sqliteMigrations.after(m.version - 1); len(s) == 0 || s[0].name != m.name {
			t.Errorf("PostgreSQL's %04d_%s has no SQLite file of that version and name beside it", m.version, m.name)
		}
	}
}
