package gpu

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/probe"
	"pitwall/internal/oaitest"
)

// A base URL with a query (Azure OpenAI's ?api-version=, Azure Functions'
// ?code=) reaches every endpoint with its path intact and its query kept.
func TestEveryEndpointKeepsTheBaseURLsQuery(t *testing.T) {
	const query = "api-version=2024-10-21&code=K1"
	for _, tt := range []struct {
		name  string
		call  func(ctx context.Context, t *testing.T, base string)
		paths []string // each must be asked, with the base's query
	}{
		{"chat completions", func(ctx context.Context, t *testing.T, base string) {
			c := client.New(client.Config{Name: "s", URL: base}, nil)
			defer c.CloseIdleConnections()
			if _, err := c.Chat(ctx, chat.Request{Model: "m1", Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err != nil {
				t.Fatalf("Chat: %v", err)
			}
		}, []string{"POST /v1/chat/completions"}},
		{"the model list and every backend probe", func(ctx context.Context, t *testing.T, base string) {
			if r := probe.Probe(ctx, nil, probe.Server{Name: "s", URL: base}); !r.Reachable || r.Error != "" {
				t.Fatalf("probe: reachable %v, error %q", r.Reachable, r.Error)
			}
		}, []string{"GET /v1/models", "GET /sim/gpus", "GET /api/v0/models", "GET /api/v1/models", "GET /api/ps",
			"GET /api/version", "GET /slots", "GET /health", "GET /metrics"}},
		{"a known backend's endpoints", func(ctx context.Context, t *testing.T, base string) {
			for _, k := range []chat.Kind{chat.KindLlamaCpp, chat.KindSim} {
				probe.Probe(ctx, nil, probe.Server{Name: "s", URL: base, Kind: k})
			}
		}, []string{"GET /models", "GET /sim/state"}},
		{"the fleet's health check", func(ctx context.Context, t *testing.T, base string) {
			f := NewFleet([]ServerConfig{{Config: client.Config{Name: "s", URL: base, Kind: chat.KindOpenAI}, Slots: 1, Models: []string{"m1"}}}, Options{})
			defer f.Close()
			if down, why := f.confirmDown(f.byName["s"]); down {
				t.Fatalf("confirmDown: down (%s)", why)
			}
		}, []string{"GET /v1/models"}},
		{"files and batches", func(ctx context.Context, t *testing.T, base string) {
			c := client.New(client.Config{Name: "s", URL: base}, nil)
			defer c.CloseIdleConnections()
			if _, err := c.CreateBatch(ctx, []byte("{}\n"), "24h", nil); err != nil {
				t.Fatalf("upload and create: %v", err)
			}
			if _, err := c.RetrieveBatch(ctx, "b1"); err != nil {
				t.Fatalf("retrieve: %v", err)
			}
			if _, err := c.CancelBatch(ctx, "b1"); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if _, _, err := c.ListBatches(ctx, "", 1); err != nil {
				t.Fatalf("list: %v", err)
			}
		}, []string{"POST /v1/files", "POST /v1/batches", "GET /v1/batches/b1", "POST /v1/batches/b1/cancel", "GET /v1/batches"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := oaitest.RecordingServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tt.call(ctx, t, srv.URL+"/v1?"+query)
			got := seen()
			for _, want := range tt.paths {
				if !slices.ContainsFunc(got, func(r oaitest.Seen) bool { return r.Method+" "+r.Path == want }) {
					t.Errorf("%s was never asked; the server saw %v", want, got)
				}
			}
			for _, r := range got {
				if !strings.HasPrefix(r.Query, query) {
					t.Errorf("%s %s arrived with query %q, want it to start with %q", r.Method, r.Path, r.Query, query)
				}
				if strings.Contains(r.Path, "api-version") || strings.Contains(r.Query, "/") {
					t.Errorf("%s %s?%s: the path and the query are mixed up", r.Method, r.Path, r.Query)
				}
			}
			if tt.name == "files and batches" && !slices.ContainsFunc(got, func(r oaitest.Seen) bool { return r.Query == query+"&limit=1" }) {
				t.Errorf("the listing's own ?limit= did not follow the base's query: %v", got)
			}
		})
	}
}

// A base URL with a query still has its chat completions posted with
// temperature 0 on the wire, which go-openai would drop.
func TestTemperatureZeroIsSentWhenTheBaseURLHasAQuery(t *testing.T) {
	srv, seen := oaitest.RecordingServer(t)
	c := client.New(client.Config{Name: "s", URL: srv.URL + "/v1?api-version=2024-10-21"}, nil)
	defer c.CloseIdleConnections()
	zero := 0.0
	if _, err := c.Chat(context.Background(), chat.Request{Model: "m1", Temperature: &zero,
		Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	got := seen()
	if len(got) != 1 || got[0].Path != "/v1/chat/completions" || got[0].Query != "api-version=2024-10-21" {
		t.Fatalf("the server saw %v, want one POST /v1/chat/completions?api-version=2024-10-21", got)
	}
	var body map[string]any
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, got[0].Body)
	}
	if temp, ok := body["temperature"]; !ok || temp != 0.0 {
		t.Errorf("temperature on the wire = %v (present %v), want 0\nbody: %s", temp, ok, got[0].Body)
	}
}
