package sim

import (
	"encoding/json"
	"fmt"
	"pitwall/gpu/simspec"
	"strings"
	"testing"
	"time"
)

func TestUnknownModelGetsTheBackendsOwnError(t *testing.T) {
	for _, tc := range []struct {
		backend string
		status  int
		typ     string
		code    string // raw JSON
		message string
	}{
		{BackendOpenAI, 404, "invalid_request_error", `"model_not_found"`, "The model `nope` does not exist or you do not have access to it."},
		{BackendLMStudio, 404, "invalid_request_error", `"model_not_found"`, `Model "nope" not found. Please specify a valid model.`},
		{BackendOllama, 404, "api_error", `null`, `model 'nope' not found`}, // as v0.17.4 answers on /v1
		{BackendLlamaCpp, 400, "invalid_request_error", `400`, `model 'nope' not found`},
		{BackendVLLM, 404, "NotFoundError", `404`, "The model `nope` does not exist."},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			cfg := instant("m1")
			cfg.Spec.Backend = tc.backend
			s := start(t, cfg)
			status, _, out := post(t, client(t), s, body("nope", "hi", nil))
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			e := decodeError(t, out)
			if e.Error.Type != tc.typ || string(e.Error.Code) != tc.code || e.Error.Message != tc.message {
				t.Errorf("error %s, want type %s code %s message %q", out, tc.typ, tc.code, tc.message)
			}
		})
	}
}

func TestModelsListsEveryOfferedModel(t *testing.T) {
	for _, backend := range []string{BackendOpenAI, BackendLMStudio, BackendOllama, BackendLlamaCpp, BackendVLLM} {
		t.Run(backend, func(t *testing.T) {
			cfg := instant("a", "b")
			cfg.Spec.Backend = backend
			s := start(t, cfg)
			status, out := get(t, client(t), s, "/v1/models")
			var list struct {
				Object string `json:"object"`
				Data   []struct {
					ID     string `json:"id"`
					Object string `json:"object"`
				} `json:"data"`
			}
			if err := json.Unmarshal(out, &list); err != nil || status != 200 {
				t.Fatalf("status %d, %s", status, out)
			}
			if list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[1].ID != "b" || list.Data[0].Object != "model" {
				t.Errorf("list %s", out)
			}
		})
	}
}

func TestLMStudioModelsShowState(t *testing.T) {
	cfg := instant("a", "b")
	cfg.Spec = simspec.Server{Backend: BackendLMStudio, Preload: []string{"b"}}
	s := start(t, cfg)
	c := client(t)
	var got struct {
		Data []struct {
			ID, Object, Type, State, Arch, Quantization string
			MaxContextLength                            int `json:"max_context_length"`
		} `json:"data"`
	}
	_, out := get(t, c, s, "/api/v0/models")
	if err := json.Unmarshal(out, &got); err != nil || len(got.Data) != 2 {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Data[0].State != "not-loaded" || got.Data[1].State != "loaded" || got.Data[0].Type != "llm" ||
		got.Data[0].Object != "model" || got.Data[0].MaxContextLength == 0 || got.Data[0].Quantization == "" {
		t.Errorf("before: %s", out)
	}
	complete(t, c, s, body("a", "hi", nil))
	_, out = get(t, c, s, "/api/v0/models")
	if !strings.Contains(string(out), `"id":"a","object":"model","type":"llm"`) || strings.Count(string(out), `"state":"loaded"`) != 2 {
		t.Errorf("after a request for a: %s", out)
	}
}

func TestOllamaPSAndTags(t *testing.T) {
	cfg := instant("llama3:8b", "qwen3:4b")
	cfg.Spec = simspec.Server{Backend: BackendOllama}
	cfg.Catalog = map[string]simspec.Model{"llama3:8b": {SizeGB: 4}}
	s := start(t, cfg)
	c := client(t)
	type psModel struct {
		Name, Model, Digest string
		Size                int64
		SizeVRAM            int64  `json:"size_vram"`
		ExpiresAt           string `json:"expires_at"`
		ContextLength       int    `json:"context_length"`
		Details             struct {
			Family        string
			ParameterSize string `json:"parameter_size"`
		}
	}
	var ps struct{ Models []psModel }
	_, out := get(t, c, s, "/api/ps")
	if err := json.Unmarshal(out, &ps); err != nil || len(ps.Models) != 0 {
		t.Fatalf("before any request: %s", out)
	}
	complete(t, c, s, body("llama3:8b", "hi", nil))
	_, out = get(t, c, s, "/api/ps")
	if err := json.Unmarshal(out, &ps); err != nil || len(ps.Models) != 1 {
		t.Fatalf("after a request: %s", out)
	}
	m := ps.Models[0]
	if m.Name != "llama3:8b" || m.Model != m.Name || m.Size != 4<<30 || m.SizeVRAM != m.Size || len(m.Digest) != 64 ||
		m.ExpiresAt == "" || m.ContextLength == 0 || m.Details.Family != "llama" || m.Details.ParameterSize != "8B" {
		t.Errorf("ps entry %s", out)
	}
	var tags struct{ Models []psModel }
	_, out = get(t, c, s, "/api/tags")
	if err := json.Unmarshal(out, &tags); err != nil || len(tags.Models) != 2 {
		t.Errorf("tags %s", out)
	}
	// Ollama's router answers a route it lacks in plain text.
	for _, path := range []string{"/api/nothing", "/v1/nothing"} {
		if status, out := get(t, c, s, path); status != 404 || string(out) != "404 page not found" {
			t.Errorf("%s: %d %s", path, status, out)
		}
	}
}

func TestOllamaUnloadsAfterKeepAlive(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, TimeScale: 1,
		Spec:    simspec.Server{Backend: BackendOllama, KeepAlive: time2m, LoadGBps: 1e9},
		Catalog: map[string]simspec.Model{"m": {TTFT: 1, TokensPerSec: 1e9}}}
	s := start(t, cfg)
	complete(t, client(t), s, body("m", "hi", nil))
	if st := s.State(); st.Models["m"].State != "loaded" {
		t.Fatalf("not resident after a request: %+v", st.Models["m"])
	}
	// Read the state as if the keep-alive had passed.
	s.mu.Lock()
	s.gen.eng.expireIdleLocked(s.gen.eng.models["m"].lastUsed.Add(time2m))
	s.mu.Unlock()
	if st := s.State(); st.Models["m"].State != "not-loaded" || s.Stats().Expiries != 1 {
		t.Errorf("resident after its keep-alive: %+v", st.Models["m"])
	}
}

func TestLlamaCppHealthSlotsAndMetrics(t *testing.T) {
	cfg := instant("m")
	cfg.Slots = 3
	cfg.Spec.Backend = BackendLlamaCpp
	s := start(t, cfg)
	c := client(t)
	status, out := get(t, c, s, "/health")
	if status != 200 || string(out) != `{"status":"ok"}` {
		t.Errorf("health %d %s", status, out)
	}
	_, out = get(t, c, s, "/slots")
	var slots []struct {
		ID           int  `json:"id"`
		IsProcessing bool `json:"is_processing"`
		NCtx         int  `json:"n_ctx"`
	}
	if err := json.Unmarshal(out, &slots); err != nil || len(slots) != 3 || slots[2].ID != 2 || slots[0].IsProcessing || slots[0].NCtx == 0 {
		t.Errorf("slots %s", out)
	}
	b := complete(t, c, s, body("m", "hi", nil))
	var tm timings
	if err := json.Unmarshal(b.Timings, &tm); err != nil || tm.PredictedN != b.Usage.CompletionTokens || tm.PredictedPerSecond <= 0 || tm.PromptN != b.Usage.PromptTokens {
		t.Errorf("timings %s for usage %+v", b.Timings, b.Usage)
	}
	_, out = get(t, c, s, "/metrics")
	for _, want := range []string{
		"# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total " + itoa(b.Usage.PromptTokens) + "\n",
		"llamacpp:tokens_predicted_total " + itoa(b.Usage.CompletionTokens) + "\n",
		"llamacpp:requests_processing 0\n",
		"llamacpp:requests_deferred 0\n",
		"llamacpp:predicted_tokens_seconds ",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
	_, out = get(t, c, s, "/models")
	if !strings.Contains(string(out), `"status":{"value":"loaded"}`) {
		t.Errorf("router models %s", out)
	}
}

func TestLlamaCppHealthIs503WhileLoading(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, TimeScale: 1,
		Spec:    simspec.Server{Backend: BackendLlamaCpp, LoadGBps: 1e-6}, // a load that never ends in a test's time
		Catalog: map[string]simspec.Model{"m": {}}}
	s := start(t, cfg)
	c := client(t)
	release := hold(t, c, s, body("m", "hi", nil))
	defer release()
	waitState(t, s, "loading", func(st State) bool { return len(st.Loading) == 1 })
	status, out := get(t, c, s, "/health")
	e := decodeError(t, out)
	if status != 503 || e.Error.Message != "Loading model" || e.Error.Type != "unavailable_error" || string(e.Error.Code) != "503" {
		t.Errorf("health while loading: %d %s", status, out)
	}
	release()
	waitState(t, s, "load abandoned", func(st State) bool { return len(st.Loading) == 0 && st.InFlight == 0 })
}

func TestVLLMMetricsPerModel(t *testing.T) {
	cfg := instant("a", "b")
	cfg.Spec.Backend = BackendVLLM
	s := start(t, cfg)
	c := client(t)
	b := complete(t, c, s, body("a", "hi", nil))
	_, out := get(t, c, s, "/metrics")
	for _, want := range []string{
		"# TYPE vllm:num_requests_running gauge\n",
		`vllm:num_requests_running{engine="0",model_name="a"} 0` + "\n",
		`vllm:num_requests_waiting{engine="0",model_name="b"} 0` + "\n",
		`vllm:kv_cache_usage_perc{engine="0",model_name="a"} 0` + "\n",
		`vllm:prompt_tokens_total{engine="0",model_name="a"} ` + itoa(b.Usage.PromptTokens) + "\n",
		`vllm:generation_tokens_total{engine="0",model_name="a"} ` + itoa(b.Usage.CompletionTokens) + "\n",
		`vllm:generation_tokens_total{engine="0",model_name="b"} 0` + "\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
	if st := s.State(); len(st.Resident) != 2 {
		t.Errorf("vllm models not all resident: %+v", st)
	}
	if s.Stats().Loads["a"] != 0 {
		t.Error("vllm loaded a model")
	}
}

func TestSimGPUsReadLikeNvidiaSmi(t *testing.T) {
	cfg := instant("a")
	cfg.Spec = simspec.Server{Backend: BackendLMStudio, GPUs: []simspec.GPU{{VRAMGB: 24}, {Name: "Sim A100", VRAMGB: 8}}, Preload: []string{"a"}}
	cfg.Catalog = map[string]simspec.Model{"a": {SizeGB: 8}}
	s := start(t, cfg)
	status, out := get(t, client(t), s, "/sim/gpus")
	var gpus []GPUReading
	if err := json.Unmarshal(out, &gpus); err != nil || status != 200 || len(gpus) != 2 {
		t.Fatalf("%d %s", status, out)
	}
	if gpus[0].Name != DefaultGPUName || gpus[1].Name != "Sim A100" || gpus[1].Index != 1 || gpus[0].UUID == gpus[1].UUID ||
		!strings.HasPrefix(gpus[0].UUID, "GPU-") || len(gpus[0].UUID) != 40 {
		t.Errorf("identity %+v", gpus)
	}
	// 8 GB split 24:8 over 32 GB.
	if gpus[0].MemoryUsedMiB != 6144 || gpus[1].MemoryUsedMiB != 2048 || gpus[0].MemoryTotalMiB != 24576 {
		t.Errorf("memory %+v", gpus)
	}
	if gpus[0].UtilizationGPU != 0 || gpus[0].PowerDrawW != idlePowerW || gpus[0].TemperatureGPU != idleTempC {
		t.Errorf("idle readings %+v", gpus[0])
	}
}

func itoa(v int) string { b, _ := json.Marshal(v); return string(b) }

func TestLlamaCppRefusesPromptsOverTheContext(t *testing.T) {
	cfg := instant("m")
	cfg.Spec.Backend = BackendLlamaCpp
	s := start(t, cfg)
	status, _, out := post(t, client(t), s, body("m", strings.Repeat("word ", contextLength+1), nil))
	var e struct {
		Error struct {
			Code          int    `json:"code"`
			Type          string `json:"type"`
			NPromptTokens int    `json:"n_prompt_tokens"`
			NCtx          int    `json:"n_ctx"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &e); err != nil || status != 400 || e.Error.Code != 400 ||
		e.Error.Type != "exceed_context_size_error" || e.Error.NCtx != contextLength || e.Error.NPromptTokens <= contextLength {
		t.Errorf("%d %s", status, out)
	}
	if s.Stats().Requests != 0 {
		t.Error("a refused request was counted as accepted")
	}
}

func TestOllamaKeepAliveIsScaledWithAFloor(t *testing.T) {
	for _, tc := range []struct {
		keep  time.Duration
		scale float64
		want  time.Duration
	}{
		{5 * time.Minute, 1, 5 * time.Minute},
		{5 * time.Minute, 0.01, 3 * time.Second},
		{5 * time.Minute, 1e-6, MinKeepAlive}, // 300 µs scaled: a model would expire between two requests
		{200 * time.Millisecond, 1, 200 * time.Millisecond},
		{200 * time.Millisecond, 1e-6, 200 * time.Millisecond}, // a keep-alive under the floor is kept as given
	} {
		t.Run(fmt.Sprintf("%s at %g", tc.keep, tc.scale), func(t *testing.T) {
			s := start(t, Config{Name: "t", Models: []string{"m"}, TimeScale: tc.scale,
				Spec: simspec.Server{Backend: BackendOllama, KeepAlive: tc.keep}})
			if got := s.keepAlive(); got != tc.want {
				t.Errorf("keep-alive %s, want %s", got, tc.want)
			}
		})
	}
}

// At a tiny time scale a model used a moment ago stays resident, and
// /api/ps says it expires a second after its last use.
func TestOllamaKeepAliveFloorKeepsAModelBetweenRequests(t *testing.T) {
	cfg := Config{Name: "t", Models: []string{"m"}, TimeScale: 1e-6, Spec: simspec.Server{Backend: BackendOllama}}
	s := start(t, cfg)
	c := client(t)
	before := time.Now()
	complete(t, c, s, body("m", "hi", nil))
	after := time.Now()
	_, out := get(t, c, s, "/api/ps")
	var ps struct {
		Models []struct {
			ExpiresAt time.Time `json:"expires_at"`
		}
	}
	if err := json.Unmarshal(out, &ps); err != nil || len(ps.Models) != 1 {
		t.Fatalf("/api/ps %s", out)
	}
	if exp := ps.Models[0].ExpiresAt; exp.Before(before.Add(MinKeepAlive)) || exp.After(after.Add(MinKeepAlive)) {
		t.Errorf("expires_at %s, want a second after the request (%s..%s)", exp, before, after)
	}
	s.mu.Lock()
	last := s.gen.eng.models["m"].lastUsed
	s.gen.eng.expireIdleLocked(last.Add(MinKeepAlive / 2))
	s.mu.Unlock()
	if st := s.State(); st.Models["m"].State != "loaded" {
		t.Fatalf("unloaded half a second after its last use: %+v", st.Models["m"])
	}
	s.mu.Lock()
	s.gen.eng.expireIdleLocked(last.Add(MinKeepAlive))
	s.mu.Unlock()
	if st := s.State(); st.Models["m"].State != "not-loaded" || s.Stats().Expiries != 1 {
		t.Errorf("resident past its keep-alive: %+v", st.Models["m"])
	}
}
