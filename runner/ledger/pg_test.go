package ledger

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"pitwall/internal/pgtest"
)

// pgOnly ends a test of PostgreSQL's own ways on the SQLite pass.
func pgOnly(t *testing.T) *pgtest.Cluster {
	t.Helper()
	if testPG == nil {
		t.Skip("PostgreSQL's own ways: runs on the PostgreSQL pass")
	}
	return testPG
}

func TestAURLIsNeverTakenForAFileName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, url := range []string{"mysql://u:secret@host/db", "postgres+x://u:secret@host/db", "http://u:secret@host/db"} {
		_, err := Open(url)
		if err == nil || !strings.Contains(err.Error(), "is not a ledger pitwall can open") || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) = %v, want a refusal that masks the password", url, err)
		}
	}
	for _, tt := range []struct {
		in string
		pg bool
	}{
		{"postgres://h/db", true}, {"postgresql://h/db", true}, {"POSTGRES://h/db", true},
		{"ledger.db", false}, {".pitwall/ledger.db", false}, {"file:ledger.db", false},
	} {
		if pg, err := IsPostgres(tt.in); pg != tt.pg || err != nil {
			t.Errorf("IsPostgres(%q) = %v, %v; want %v", tt.in, pg, err, tt.pg)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a URL left files behind: %v", entries)
	}
}

func TestPostgresRefusalsSayWhyNameTheURLAndHideThePassword(t *testing.T) {
	t.Parallel()
	c := pgOnly(t)
	url := testPath(t)
	foreign := testPath(t)
	if err := c.ExecIn(foreign[strings.LastIndex(foreign, "/")+1:strings.Index(foreign, "?")], `CREATE TABLE invoices (id int)`); err != nil {
		t.Fatal(err)
	}
	newer := testPath(t)
	l, err := Open(newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.w.Exec(`UPDATE pitwall_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// A role that may read but not write.
	ro := testPath(t)
	if l, err = Open(ro); err != nil {
		t.Fatal(err)
	}
	l.Close()
	roName := ro[strings.LastIndex(ro, "/")+1 : strings.Index(ro, "?")]
	if err := c.Exec(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'looker') THEN
		CREATE ROLE looker LOGIN PASSWORD 'looker-secret'; END IF; END $$`); err != nil {
		t.Fatal(err)
	}
	if err := c.ExecIn(roName, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO looker`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, url string
		is        error
		says      string
	}{
		{"a wrong password", strings.Replace(url, pgtest.Password, "wrong-secret", 1), ErrUnreachable, "refused the login"},
		{"no such database", strings.Replace(url, "/t", "/nosuch", 1), ErrUnreachable, "does not exist"},
		{"nothing listening", strings.Replace(url, ":"+itoa(c.Port()), ":1", 1), ErrUnreachable, "is the server up"},
		{"another application's database", foreign, ErrNotPitwall, "no pitwall_schema"},
		{"a newer schema", newer, nil, "newer than this pitwall's"},
		{"a role that may only read", c.URLAs("looker", "looker-secret", roName), ErrNotWritable, "lacks SELECT, INSERT or UPDATE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.url)
			if err == nil {
				t.Fatal("opened")
			}
			msg := err.Error()
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(msg, tt.says) {
				t.Errorf("error %q does not say %q", msg, tt.says)
			}
			for _, secret := range []string{pgtest.Password, "wrong-secret", "looker-secret"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error shows the password: %s", msg)
				}
			}
			if !strings.Contains(msg, "REDACTED@127.0.0.1") {
				t.Errorf("error does not name the masked URL: %s", msg)
			}
		})
	}
	// Read-only: a database that is not a ledger is said so.
	empty := testPath(t)
	if _, err := OpenReadOnly(empty); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly of an empty database = %v, want fs.ErrNotExist", err)
	}
}

func itoa(n int) string {
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// Two processes opening a fresh database at once create its schema once.
func TestConcurrentOpensOfAFreshDatabaseMigrateOnce(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	url := testPath(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			l, err := Open(url)
			if err == nil {
				err = l.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
