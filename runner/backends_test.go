package runner

import (
	"os"
	"sync"
	"testing"

	"pitwall/config"
	"pitwall/internal/pgtest"
)

// The runner's tests run on SQLite; those that say most about what the
// ledger must hold for a run (a run, a re-judge, a resume, the caches)
// run on PostgreSQL too, through onBackends, in one throwaway cluster the
// package shares.

var pgShared struct {
	once sync.Once
	c    *pgtest.Cluster
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgShared.c != nil {
		pgShared.c.Stop()
	}
	os.Exit(code)
}

// onBackends runs f as a subtest per backend; f puts its config's ledger
// on that backend with ledgerOn (SQLite's is the file testConfig names).
// Without PostgreSQL's binaries its subtest skips, saying why (it fails
// in CI, which installs them).
func onBackends(t *testing.T, f func(t *testing.T, ledgerOn func(*config.Config))) {
	t.Run("sqlite", func(t *testing.T) { f(t, func(*config.Config) {}) })
	t.Run("postgres", func(t *testing.T) {
		pgShared.once.Do(func() { pgShared.c, pgShared.err = pgtest.Start() })
		if err := pgShared.err; err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		f(t, func(cfg *config.Config) { cfg.DB = pgShared.c.NewDatabase(t) })
	})
}
