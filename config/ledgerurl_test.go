package config

import (
	"strings"
	"testing"
)

// [ledger] url names a team's PostgreSQL ledger in the file: it stands
// for the file's db, and PITWALL_DB and --db still override it; its
// password is masked wherever the config is shown.
func TestLedgerURLInTheFileIsTheLedgerUnlessEnvOrFlagSayOtherwise(t *testing.T) {
	t.Parallel()
	const url = "postgres://alice:s3cret-pw@db.lab:5432/pitwall?sslmode=require"
	withURL := precedenceConfig + "\n[ledger]\nurl = \"" + url + "\"\n"
	tests := []struct {
		name  string
		body  string
		env   map[string]string
		flags Overrides
		want  string
	}{
		{"the file's db without [ledger]", precedenceConfig, nil, Overrides{}, "file.db"},
		{"[ledger] url over the file's db", withURL, nil, Overrides{}, url},
		{"env over [ledger] url", withURL, map[string]string{EnvDB: "env.db"}, Overrides{}, "env.db"},
		{"flag over env and [ledger] url", withURL, map[string]string{EnvDB: "env.db"}, Overrides{DB: "flag.db"}, "flag.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, writeConfig(t, tt.body), tt.flags, envMap(tt.env))
			if c.DB != tt.want {
				t.Errorf("DB = %q, want %q", c.DB, tt.want)
			}
			if js := c.RedactedJSON(); strings.Contains(js, "s3cret-pw") || strings.Contains(js, "sslmode=require") {
				t.Errorf("the config shown holds the URL's password or settings:\n%s", js)
			}
		})
	}
}
