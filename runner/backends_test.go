package runner

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"pitwall/config"
	"pitwall/internal/pgtest"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
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

// nulServer is an OpenAI-compatible server of one model, m, whose first
// fail chat requests are answered 500 with an error message holding a
// NUL, and the rest with a reply holding one: bytes PostgreSQL's TEXT
// refuses.
type nulServer struct {
	mu   sync.Mutex
	fail int
}

func (f *nulServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	}
	f.mu.Lock()
	failing := f.fail > 0
	if failing {
		f.fail--
	}
	f.mu.Unlock()
	if failing {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"over\u0000loaded","type":"server_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s) }
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"42\u0000!"}}]}`)
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	chunk(`[DONE]`)
}

func TestANULInAnErrorMessageAReplyOrATestIDFailsNoWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		fail, retries int
		want          state.CellStatus
	}{
		{"an error, then a reply", 1, 1, state.Completed},
		{"errors to the end", 5, 0, state.Errored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onBackends(t, func(t *testing.T, ledgerOn func(*config.Config)) {
				ts := httptest.NewServer(&nulServer{fail: tc.fail})
				defer ts.Close()
				cfg := testConfig(t, fmt.Sprintf(`
[run]
retries = %d
[[servers]]
name = "s"
url = %q
kind = "openai"
slots = 1
`, tc.retries, ts.URL+"/v1"))
				ledgerOn(cfg)
				cfg.Models = []string{"m"}
				cfg.Tests = cfg.Tests[2:3] // "math": contains 42
				cfg.Tests[0].ID = "ma\x00th \xff"
				h := newHarness(t, cfg, true)
				b := h.finish(t)
				if b.Status != state.RunCompleted {
					t.Fatalf("the run ended %s: %s", b.Status, b.Message)
				}
				if c := b.Cell(0, 0, 0); c.Status != tc.want {
					t.Fatalf("cell %s (%s), want %s", c.Status, c.Said().Error, tc.want)
				}
				if err := h.led.Flush(); err != nil {
					t.Fatal(err)
				}
				reqs, err := h.led.Requests(h.run.ID())
				if err != nil {
					t.Fatal(err)
				}
				var errs, replies int
				for _, q := range reqs {
					switch {
					case q.Purpose != ledger.PurposeInference:
					case q.Status == ledger.StatusError && strings.Contains(q.Error, "over") && strings.Contains(q.Error, "loaded"):
						errs++
					case q.Status == ledger.StatusCompleted && q.Output == "42\x00!":
						replies++
					}
				}
				if errs != min(tc.fail, tc.retries+1) {
					t.Errorf("%d error rows naming the server's message, want %d", errs, min(tc.fail, tc.retries+1))
				}
				if want := max(0, tc.retries+1-tc.fail); replies != min(want, 1) {
					t.Errorf("%d completed rows with the reply whole, want %d", replies, min(want, 1))
				}
				cells, err := h.led.Cells(h.run.ID())
				if err != nil || len(cells) != 1 {
					t.Fatalf("cells %+v, %v; want the one", cells, err)
				}
				if got := cells[0]; string(got.Status) != string(tc.want) || tc.want == state.Completed && got.Output != "42\x00!" ||
					tc.want == state.Errored && !strings.Contains(got.Error, "loaded") {
					t.Errorf("cell in the ledger: %s %q %q", got.Status, got.Output, got.Error)
				}
			})
		})
	}
}
