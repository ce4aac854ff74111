package gpu

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"

	openai "github.com/sashabaranov/go-openai"
)

func TestEndpointJoinsPathsBeforeTheBaseQuery(t *testing.T) {
	for _, tt := range []struct{ base, path, want string }{
		{"http://h/v1", "/chat/completions", "http://h/v1/chat/completions"},
		{"http://h/v1/", "/models", "http://h/v1/models"},
		{"http://h/v1?api-version=2024-10-21", "/chat/completions", "http://h/v1/chat/completions?api-version=2024-10-21"},
		{"http://h/v1/?code=K&x=1", "/models", "http://h/v1/models?code=K&x=1"},
		{"http://h/v1?api-version=1", "/batches?limit=1", "http://h/v1/batches?api-version=1&limit=1"},
		{"http://h/v1#frag", "/models", "http://h/v1/models"},
		{" http://h/v1 ", "models", "http://h/v1/models"},
	} {
		if got := EndpointURL(tt.base, tt.path); got != tt.want {
			t.Errorf("EndpointURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
	for _, tt := range []struct{ base, path, want string }{
		{"http://h/v1", "/api/ps", "http://h/api/ps"},
		{"http://h:8080/v1/?api-version=1", "/slots", "http://h:8080/slots?api-version=1"},
		{"http://h/proxy/v1?code=K", "/metrics", "http://h/proxy/metrics?code=K"},
		{"http://h", "/props", "http://h/props"},
	} {
		if got := BackendURL(tt.base, tt.path); got != tt.want {
			t.Errorf("BackendURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

// seenRequest is what the recording server was asked.
type seenRequest struct {
	method, path, query string
	body                []byte
}

func (r seenRequest) String() string { return r.method + " " + r.path + "?" + r.query }

// recordingServer answers the endpoints pitwall calls just enough for each
// call to go on, and 404 for the backends' own endpoints (so that kind
// detection asks every one of them), recording each request as it arrived.
func recordingServer(t *testing.T) (*httptest.Server, func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen []seenRequest
	batch := func(status string) string {
		return fmt.Sprintf(`{"id":"b1","object":"batch","endpoint":"/v1/chat/completions","input_file_id":"file-1","completion_window":"24h","status":%q,"created_at":1700000000}`, status)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, body})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "POST /v1/chat/completions":
			oaiReply(w, "m1", "Hello")
		case "GET /v1/models":
			oaiModels(w, "m1")
		case "POST /v1/files":
			fmt.Fprint(w, `{"id":"file-1","object":"file","purpose":"batch","filename":"pitwall-batch.jsonl","bytes":3}`)
		case "POST /v1/batches":
			fmt.Fprint(w, batch("validating"))
		case "GET /v1/batches":
			fmt.Fprintf(w, `{"object":"list","data":[%s],"has_more":false}`, batch("completed"))
		case "GET /v1/batches/b1":
			fmt.Fprint(w, batch("in_progress"))
		case "POST /v1/batches/b1/cancel":
			fmt.Fprint(w, batch("cancelling"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// A base URL with a query (Azure OpenAI's ?api-version=, Azure Functions'
// ?code=) reaches every endpoint with its path intact and its query kept.
func TestEveryEndpointKeepsTheBaseURLsQuery(t *testing.T) {
	const query = "api-version=2024-10-21&code=K1"
	limit := 1
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
			if r := Probe(ctx, nil, ServerConfig{Config: client.Config{Name: "s", URL: base}}); !r.Reachable || r.Error != "" {
				t.Fatalf("probe: reachable %v, error %q", r.Reachable, r.Error)
			}
		}, []string{"GET /v1/models", "GET /sim/gpus", "GET /api/v0/models", "GET /api/v1/models", "GET /api/ps",
			"GET /api/version", "GET /slots", "GET /health", "GET /metrics"}},
		{"a known backend's endpoints", func(ctx context.Context, t *testing.T, base string) {
			for _, k := range []chat.Kind{chat.KindLlamaCpp, chat.KindSim} {
				Probe(ctx, nil, ServerConfig{Config: client.Config{Name: "s", URL: base, Kind: k}})
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
			if _, err := c.api.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "b.jsonl", Bytes: []byte("{}\n"), Purpose: openai.PurposeBatch}); err != nil {
				t.Fatalf("upload: %v", err)
			}
			if _, err := c.api.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: "file-1", Endpoint: openai.BatchEndpointChatCompletions, CompletionWindow: "24h"}); err != nil {
				t.Fatalf("create: %v", err)
			}
			if _, err := c.api.RetrieveBatch(ctx, "b1"); err != nil {
				t.Fatalf("retrieve: %v", err)
			}
			if _, err := c.api.CancelBatch(ctx, "b1"); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if _, err := c.api.ListBatch(ctx, nil, &limit); err != nil {
				t.Fatalf("list: %v", err)
			}
		}, []string{"POST /v1/files", "POST /v1/batches", "GET /v1/batches/b1", "POST /v1/batches/b1/cancel", "GET /v1/batches"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := recordingServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tt.call(ctx, t, srv.URL+"/v1?"+query)
			got := seen()
			for _, want := range tt.paths {
				if !slices.ContainsFunc(got, func(r seenRequest) bool { return r.method+" "+r.path == want }) {
					t.Errorf("%s was never asked; the server saw %v", want, got)
				}
			}
			for _, r := range got {
				if !strings.HasPrefix(r.query, query) {
					t.Errorf("%s %s arrived with query %q, want it to start with %q", r.method, r.path, r.query, query)
				}
				if strings.Contains(r.path, "api-version") || strings.Contains(r.query, "/") {
					t.Errorf("%s %s?%s: the path and the query are mixed up", r.method, r.path, r.query)
				}
			}
			if tt.name == "files and batches" && !slices.ContainsFunc(got, func(r seenRequest) bool { return r.query == query+"&limit=1" }) {
				t.Errorf("the listing's own ?limit= did not follow the base's query: %v", got)
			}
		})
	}
}

// A base URL with a query still has its chat completions posted with
// temperature 0 on the wire, which go-openai would drop.
func TestTemperatureZeroIsSentWhenTheBaseURLHasAQuery(t *testing.T) {
	srv, seen := recordingServer(t)
	c := client.New(client.Config{Name: "s", URL: srv.URL + "/v1?api-version=2024-10-21"}, nil)
	defer c.CloseIdleConnections()
	zero := 0.0
	if _, err := c.Chat(context.Background(), chat.Request{Model: "m1", Temperature: &zero,
		Messages: []chat.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	got := seen()
	if len(got) != 1 || got[0].path != "/v1/chat/completions" || got[0].query != "api-version=2024-10-21" {
		t.Fatalf("the server saw %v, want one POST /v1/chat/completions?api-version=2024-10-21", got)
	}
	var body map[string]any
	if err := json.Unmarshal(got[0].body, &body); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, got[0].body)
	}
	if temp, ok := body["temperature"]; !ok || temp != 0.0 {
		t.Errorf("temperature on the wire = %v (present %v), want 0\nbody: %s", temp, ok, got[0].body)
	}
}
