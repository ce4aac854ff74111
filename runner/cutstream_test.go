package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/runner/history"
	"pitwall/runner/state"
)

// cuttingServer is a model that cuts its own reply, as Ollama does after
// one token repeated too often: some content, then the end of the stream
// with no finish_reason and no [DONE]. It counts the chat requests and
// keeps the temperature of each.
type cuttingServer struct {
	mu    sync.Mutex
	temps []any
}

func (s *cuttingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	s.temps = append(s.temps, body["temperature"])
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, part := range []string{"6 times 7 is ", "42 42 42 ", "42 42"} {
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", part)
	}
	// The handler returns: the body ends cleanly, with no finish marker.
}

func (s *cuttingServer) requests() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]any(nil), s.temps...)
}

func TestACutStreamKeepsItsPartialOutputAndIsRetriedOnceAtTemperatureZero(t *testing.T) {
	t.Parallel()
	const partial = "6 times 7 is 42 42 42 42 42"
	cases := []struct {
		name         string
		temperature  string
		wantRequests int
	}{
		{"temperature 0: the identical request is retried once", "0.0", 2},
		{"temperature 0.7: retried as configured", "0.7", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &cuttingServer{}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			cfg := testConfig(t, fmt.Sprintf(`
[run]
retries = 3
temperature = %s
[[servers]]
name = "s"
url = %q
kind = "openai"
slots = 1
`, tc.temperature, ts.URL+"/v1"))
			cfg.Models = []string{"m"}
			cfg.Tests = cfg.Tests[2:3] // "math"
			h := newHarness(t, cfg, true)
			b := h.finish(t)

			if got := srv.requests(); len(got) != tc.wantRequests {
				t.Errorf("the server saw %d requests (temperatures %v), want %d", len(got), got, tc.wantRequests)
			}
			c := b.Cell(0, 0, 0)
			if c.Status != state.Errored || c.Said().ErrorClass != chat.ClassCut || c.Attempts != tc.wantRequests {
				t.Errorf("cell %s %s after %d attempts, want ⚠️ cut after %d", c.Status, c.Said().ErrorClass, c.Attempts, tc.wantRequests)
			}
			// The live cell leaves its texts to the ledger.
			whole, err := history.LoadCell(h.led, h.run.ID(), state.CellRef{Test: c.Test, Model: c.Model})
			if err != nil {
				t.Fatal(err)
			}
			if !c.Clipped || whole.Said().Output != partial {
				t.Errorf("cell output %q (clipped %v), want the partial reply %q", whole.Said().Output, c.Clipped, partial)
			}
			if !strings.Contains(c.Said().Error, "without a finish_reason") {
				t.Errorf("cell error %q does not say the stream ended without a finish reason", c.Said().Error)
			}

			x := h.export(t)
			if len(x.Cells) != 1 {
				t.Fatalf("export has %d cells, want 1", len(x.Cells))
			}
			if xc := x.Cells[0]; xc.Output != partial || xc.ErrorClass != string(chat.ClassCut) {
				t.Errorf("exported cell output %q error_class %q, want %q and %q", xc.Output, xc.ErrorClass, partial, chat.ClassCut)
			}
		})
	}
}
