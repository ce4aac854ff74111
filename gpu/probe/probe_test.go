package probe

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/telemetry"
	"pitwall/internal/oaitest"
)

// route is one canned answer of a fake backend: a testdata file, or a body.
type route struct {
	status int    // default 200
	file   string // under testdata/backends
	body   string
}

// fakeBackend serves routes over a real socket and records the paths asked.
type fakeBackend struct {
	*httptest.Server
	mu    sync.Mutex
	asked []string
}

func newFakeBackend(t *testing.T, routes map[string]route) *fakeBackend {
	t.Helper()
	fb := &fakeBackend{}
	bodies := make(map[string][]byte, len(routes))
	for path, r := range routes {
		body := []byte(r.body)
		if r.file != "" {
			var err error
			if body, err = os.ReadFile(filepath.Join("testdata", "backends", r.file)); err != nil {
				t.Fatal(err)
			}
		}
		bodies[path] = body
	}
	fb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fb.mu.Lock()
		fb.asked = append(fb.asked, req.URL.Path)
		fb.mu.Unlock()
		r, ok := routes[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		if r.status != 0 {
			w.WriteHeader(r.status)
		}
		w.Write(bodies[req.URL.Path])
	}))
	t.Cleanup(fb.Close)
	return fb
}

func (fb *fakeBackend) paths() []string {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return slices.Clone(fb.asked)
}

// The backends, each with the endpoints a real one of its kind serves.
var backendRoutes = map[string]map[string]route{
	"lmstudio": {
		"/v1/models":     {file: "lmstudio-v1-models.json"},
		"/api/v0/models": {file: "lmstudio-api-v0-models.json"},
	},
	"ollama": {
		"/v1/models":   {file: "ollama-v1-models.json"},
		"/api/ps":      {file: "ollama-api-ps.json"},
		"/api/tags":    {body: `{"models":[]}`},
		"/api/version": {body: `{"version":"0.17.1"}`},
	},
	"llamacpp": {
		"/v1/models": {file: "llamacpp-v1-models.json"},
		"/models":    {file: "llamacpp-v1-models.json"},
		"/slots":     {file: "llamacpp-slots.json"},
		"/metrics":   {file: "llamacpp-metrics.txt"},
		"/health":    {body: `{"status":"ok"}`},
		"/props":     {file: "llamacpp-props.json"},
	},
	"llamacpp-router": {
		"/v1/models": {file: "llamacpp-router-models.json"},
		"/models":    {file: "llamacpp-router-models.json"},
		"/slots":     {file: "llamacpp-slots.json"},
		"/health":    {body: `{"status":"ok"}`},
	},
	// --no-slots and no --metrics: only /health and /props tell it apart.
	"llamacpp-bare": {
		"/v1/models": {file: "llamacpp-v1-models.json"},
		"/models":    {file: "llamacpp-v1-models.json"},
		"/slots":     {status: 501, body: `{"error":{"code":501,"message":"This server does not support slots endpoint. Start it with --slots","type":"not_supported_error"}}`},
		"/health":    {body: `{"status":"ok"}`},
		"/props":     {file: "llamacpp-props.json"},
	},
	"vllm": {
		"/v1/models": {file: "vllm-v1-models.json"},
		"/health":    {},
		"/metrics":   {file: "vllm-metrics.txt"},
	},
	"vllm-v0": {
		"/v1/models": {file: "vllm-v1-models.json"},
		"/health":    {},
		"/metrics":   {file: "vllm-metrics-v0.txt"},
	},
	"openai": {
		"/v1/models": {file: "openai-v1-models.json"},
	},
	"sim": {
		"/v1/models":     {file: "sim-v1-models.json"},
		"/sim/gpus":      {file: "sim-gpus.json"},
		"/sim/state":     {file: "sim-state.json"},
		"/api/v0/models": {file: "lmstudio-api-v0-models.json"},
	},
	// A simulator that serves no /sim/state: the imitated backend's
	// endpoints still tell what is resident.
	"sim-stateless": {
		"/v1/models":     {file: "sim-v1-models.json"},
		"/sim/gpus":      {file: "sim-gpus.json"},
		"/api/v0/models": {file: "lmstudio-api-v0-models.json"},
	},
}

func TestProbeReadsEachBackend(t *testing.T) {
	tests := []struct {
		backend string
		kind    chat.Kind // configured; "" detects
		want    Result
	}{
		{
			backend: "lmstudio",
			want: Result{Kind: "lmstudio",
				Models:   []string{"qwen3-8b", "google/gemma-3-12b", "text-embedding-nomic-embed-text-v1.5"},
				Resident: []string{"qwen3-8b"}},
		},
		{
			backend: "ollama",
			want: Result{Kind: "ollama",
				Models:   []string{"qwen3:8b", "gemma3:12b", "granite4:micro"},
				Resident: []string{"qwen3:8b", "gemma3:12b"}},
		},
		{
			// /metrics is the authority on running requests over /slots.
			backend: "llamacpp",
			want: Result{Kind: "llamacpp",
				Models: []string{"Qwen3-8B-Q4_K_M.gguf"}, Resident: []string{"Qwen3-8B-Q4_K_M.gguf"},
				Slots: 2, Running: n(2), Waiting: n(3)},
		},
		{
			backend: "llamacpp-router",
			want: Result{Kind: "llamacpp",
				Models:   []string{"qwen3-8b", "gemma-3-12b", "granite-4.0-micro"},
				Resident: []string{"qwen3-8b"}, Slots: 2, Running: n(1)},
		},
		{
			backend: "llamacpp-bare",
			want: Result{Kind: "llamacpp",
				Models: []string{"Qwen3-8B-Q4_K_M.gguf"}, Resident: []string{"Qwen3-8B-Q4_K_M.gguf"}},
		},
		{
			// Two engines: queues add up, the fuller KV cache counts.
			backend: "vllm",
			want: Result{Kind: "vllm", Models: []string{"Qwen/Qwen3-8B"}, Resident: []string{"Qwen/Qwen3-8B"},
				Running: n(5), Waiting: n(6), KVCachePct: 42.13},
		},
		{
			backend: "vllm-v0",
			want: Result{Kind: "vllm", Models: []string{"Qwen/Qwen3-8B"}, Resident: []string{"Qwen/Qwen3-8B"},
				Running: n(1), Waiting: n(0), KVCachePct: 5.71},
		},
		{
			backend: "openai",
			want:    Result{Kind: "openai", Models: []string{"gpt-4o-mini", "gpt-4o"}},
		},
		{
			backend: "sim",
			want: Result{Kind: "sim", Models: []string{"qwen3-8b", "gemma-3-12b"},
				Resident: []string{"qwen3-8b"}, Slots: 4, Running: n(1), Waiting: n(2),
				Loading: []string{}, VRAMTotalGB: 24, VRAMUsedGB: 5,
				GPUs: []telemetry.GPUState{
					{Index: 0, UUID: "GPU-sim-0", Name: "Simulated RTX 4090", UtilPct: 87.5, MemUsedMiB: 20480, MemTotalMiB: 24576, TempC: 71, PowerW: 402.5},
					{Index: 1, UUID: "GPU-sim-1", Name: "Simulated RTX 4090", MemUsedMiB: 512, MemTotalMiB: 24576, TempC: 35, PowerW: 21},
				}},
		},
		{
			backend: "sim-stateless",
			kind:    "sim",
			want: Result{Kind: "sim", Models: []string{"qwen3-8b", "gemma-3-12b"},
				Resident: []string{"qwen3-8b"},
				GPUs: []telemetry.GPUState{
					{Index: 0, UUID: "GPU-sim-0", Name: "Simulated RTX 4090", UtilPct: 87.5, MemUsedMiB: 20480, MemTotalMiB: 24576, TempC: 71, PowerW: 402.5},
					{Index: 1, UUID: "GPU-sim-1", Name: "Simulated RTX 4090", MemUsedMiB: 512, MemTotalMiB: 24576, TempC: 35, PowerW: 21},
				}},
		},
		{
			// Configured as ollama: taken at its word, nothing is detected.
			backend: "ollama",
			kind:    "ollama",
			want: Result{Kind: "ollama",
				Models:   []string{"qwen3:8b", "gemma3:12b", "granite4:micro"},
				Resident: []string{"qwen3:8b", "gemma3:12b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.backend+"/kind="+string(tt.kind), func(t *testing.T) {
			fb := newFakeBackend(t, backendRoutes[tt.backend])
			cfg := Server{Name: "gpu0", URL: fb.URL + "/v1", Kind: tt.kind}
			got := Probe(t.Context(), fb.Client(), cfg)

			if !got.Reachable || got.Error != "" {
				t.Fatalf("Reachable = %v, chat.Error = %q", got.Reachable, got.Error)
			}
			if got.Server != "gpu0" || got.URL != cfg.URL {
				t.Errorf("Server, URL = %q, %q", got.Server, got.URL)
			}
			if got.Latency <= 0 {
				t.Errorf("Latency = %v, want the /v1/models round trip", got.Latency)
			}
			for i := range got.GPUs {
				got.GPUs[i].At = tt.want.GPUs[i].At
			}
			if math.Abs(got.KVCachePct-tt.want.KVCachePct) > 1e-9 {
				t.Errorf("KVCachePct = %v, want %v", got.KVCachePct, tt.want.KVCachePct)
			}
			want := tt.want
			want.Server, want.URL, want.Reachable = got.Server, got.URL, true
			want.Latency, want.KVCachePct = got.Latency, got.KVCachePct
			want.Status = http.StatusOK
			if !reflect.DeepEqual(got, want) {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
			if tt.kind != "" && tt.kind != "sim" {
				for _, p := range fb.paths() {
					if p == "/sim/gpus" || p == "/api/v0/models" {
						t.Errorf("a configured kind was still detected: asked %s", p)
					}
				}
			}
		})
	}
}

func TestDetectKind(t *testing.T) {
	tests := []struct {
		backend string
		want    chat.Kind
	}{
		{"lmstudio", "lmstudio"},
		{"ollama", "ollama"},
		{"llamacpp", "llamacpp"},
		{"llamacpp-router", "llamacpp"},
		{"llamacpp-bare", "llamacpp"},
		{"vllm", "vllm"},
		{"vllm-v0", "vllm"},
		{"openai", "openai"},
		{"sim", "sim"},
	}
	for _, tt := range tests {
		t.Run(tt.backend, func(t *testing.T) {
			fb := newFakeBackend(t, backendRoutes[tt.backend])
			for _, url := range []string{fb.URL + "/v1", fb.URL + "/v1/", fb.URL} {
				if got := DetectKind(t.Context(), fb.Client(), url); got != tt.want {
					t.Errorf("DetectKind(%s) = %q, want %q", url, got, tt.want)
				}
			}
		})
	}
}

func TestDetectKindWantsEachBackendsShape(t *testing.T) {
	// A server that answers every path 200 with a page is none of them.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<!doctype html><title>proxy</title>"))
	}))
	defer srv.Close()
	if got := DetectKind(t.Context(), srv.Client(), srv.URL+"/v1"); got != "openai" {
		t.Errorf("DetectKind = %q, want openai", got)
	}
}

func TestProbeFailures(t *testing.T) {
	// A port nothing listens on: bind one, then let it go.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()

	keyed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sekrit" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"m1","object":"model"}]}`))
	}))
	defer keyed.Close()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>it works</html>"))
	}))
	defer page.Close()

	tests := []struct {
		name          string
		cfg           Server
		wantReachable bool
		wantErr       string
		wantModels    []string
	}{
		{"nothing listening", Server{URL: closed, Kind: "openai"}, false, "connection refused", nil},
		{"key missing", Server{URL: keyed.URL + "/v1", Kind: "openai"}, true, "HTTP 401", nil},
		{"key given", Server{URL: keyed.URL + "/v1", Kind: "openai", APIKey: "sekrit"}, true, "", []string{"m1"}},
		{"not an API", Server{URL: page.URL + "/v1", Kind: "openai"}, true, "not the JSON expected", nil},
		{"configured models stand in", Server{URL: page.URL + "/v1", Kind: "openai", Models: []string{"a", "b"}}, true, "not the JSON expected", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Probe(t.Context(), nil, tt.cfg)
			if got.Reachable != tt.wantReachable {
				t.Errorf("Reachable = %v, want %v (chat.Error %q)", got.Reachable, tt.wantReachable, got.Error)
			}
			if tt.wantErr == "" && got.Error != "" || !strings.Contains(got.Error, tt.wantErr) {
				t.Errorf("Error = %q, want it to say %q", got.Error, tt.wantErr)
			}
			if tt.wantErr != "" && !strings.Contains(got.Error, tt.cfg.URL) {
				t.Errorf("Error = %q does not name the URL", got.Error)
			}
			if !slices.Equal(got.Models, tt.wantModels) {
				t.Errorf("Models = %q, want %q", got.Models, tt.wantModels)
			}
		})
	}
}

func TestProbeHonoursContext(t *testing.T) {
	fb := newFakeBackend(t, backendRoutes["openai"])
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got := Probe(ctx, fb.Client(), Server{URL: fb.URL + "/v1"})
	if got.Reachable || !strings.Contains(got.Error, "cancelled") {
		t.Errorf("Reachable = %v, chat.Error = %q; want a cancelled probe", got.Reachable, got.Error)
	}
	if n := len(fb.paths()); n != 0 {
		t.Errorf("a cancelled probe still asked %d paths", n)
	}
}

func TestProbeReportsTheStatusOfTheModelsList(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusNotFound, http.StatusServiceUnavailable} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if status == http.StatusOK {
				oaitest.Models(w, "m")
				return
			}
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		r := Probe(t.Context(), srv.Client(), Server{Name: "s", URL: srv.URL + "/v1", Kind: "openai"})
		if !r.Reachable || r.Status != status {
			t.Errorf("server answering %d: reachable %v, status %d", status, r.Reachable, r.Status)
		}
	}
	r := Probe(t.Context(), nil, Server{Name: "gone", URL: oaitest.ClosedURL(t), Kind: "openai"})
	if r.Reachable || r.Status != 0 {
		t.Errorf("nothing listening: reachable %v, status %d; want false, 0", r.Reachable, r.Status)
	}
}

// n is a count a backend told.
func n(v int) *int { return &v }
