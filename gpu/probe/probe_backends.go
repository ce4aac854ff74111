package probe

import (
	"context"
	"encoding/json"
	"strings"

	"pitwall/gpu/chat"
	"pitwall/gpu/telemetry"
)

// The bodies below are the parts of each backend's state endpoints that
// probes read; see BACKENDS.md for where each shape comes from.

// openAIModels is GET /v1/models (and llama.cpp's GET /models).
type openAIModels struct {
	Data []struct {
		ID string `json:"id"`
		// Status is set by llama.cpp in router mode: loaded, loading,
		// unloaded.
		Status *struct {
			Value string `json:"value"`
		} `json:"status"`
	} `json:"data"`
}

// lmstudioV0Models is LM Studio's GET /api/v0/models.
type lmstudioV0Models struct {
	Data *[]struct {
		ID    string  `json:"id"`
		State *string `json:"state"`
	} `json:"data"`
}

// lmstudioV1Models is LM Studio 0.4's GET /api/v1/models.
type lmstudioV1Models struct {
	Models *[]struct {
		Key            string            `json:"key"`
		LoadedInstance []json.RawMessage `json:"loaded_instances"`
	} `json:"models"`
}

// ollamaPS is Ollama's GET /api/ps.
type ollamaPS struct {
	Models *[]struct {
		Name          string `json:"name"`
		Model         string `json:"model"`
		ContextLength int    `json:"context_length"`
	} `json:"models"`
}

// ollamaVersion is Ollama's GET /api/version.
type ollamaVersion struct {
	Version string `json:"version"`
}

// llamacppSlot is one element of llama.cpp's GET /slots.
type llamacppSlot struct {
	ID           *int  `json:"id"`
	IsProcessing *bool `json:"is_processing"`
	NCtx         *int  `json:"n_ctx"`
}

// llamacppProps is the part of llama.cpp's GET /props that marks it.
type llamacppProps struct {
	TotalSlots *int            `json:"total_slots"`
	Defaults   json.RawMessage `json:"default_generation_settings"`
	BuildInfo  string          `json:"build_info"`
}

// simState is the part of the simulator's GET /sim/state that probes read.
// Every field is optional; absent ones leave what the backend endpoints said.
type simState struct {
	Resident []string `json:"resident"`
	Slots    *int     `json:"slots"`
	Busy     *int     `json:"busy"`  // slots held
	Queue    *int     `json:"queue"` // requests waiting for a slot
	Loading  []string `json:"loading"`
	VRAMGB   float64  `json:"vram_gb"`
	VRAMUsed float64  `json:"vram_used_gb"`
}

// readLMStudio fills Resident from the models LM Studio says are loaded.
func readLMStudio(ctx context.Context, c Getter, root Endpoint, r *Result) {
	var v0 lmstudioV0Models
	if err := c.GetJSON(ctx, root.URL("/api/v0/models"), &v0); err == nil && v0.Data != nil {
		r.Resident = []string{}
		for _, m := range *v0.Data {
			if m.State != nil && *m.State == "loaded" {
				r.Resident = append(r.Resident, m.ID)
			}
		}
		return
	}
	var v1 lmstudioV1Models
	if err := c.GetJSON(ctx, root.URL("/api/v1/models"), &v1); err == nil && v1.Models != nil {
		r.Resident = []string{}
		for _, m := range *v1.Models {
			if len(m.LoadedInstance) > 0 {
				r.Resident = append(r.Resident, m.Key)
			}
		}
	}
}

// readOllama fills Resident from the models Ollama has in memory.
func readOllama(ctx context.Context, c Getter, root Endpoint, r *Result) {
	var ps ollamaPS
	if err := c.GetJSON(ctx, root.URL("/api/ps"), &ps); err != nil || ps.Models == nil {
		return
	}
	r.Resident = []string{}
	for _, m := range *ps.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		r.Resident = append(r.Resident, name)
	}
}

// ContextLengths reads Ollama's /api/ps under root: the context length of
// each loaded model, under its name, its model and its name without
// ":latest". ollama is false when the server answered as something else (no
// such endpoint, or another shape); err is set when it did not answer.
func ContextLengths(ctx context.Context, c Getter, root Endpoint) (lengths map[string]int, ollama bool, err error) {
	var ps ollamaPS
	err = c.GetJSON(ctx, root.URL("/api/ps"), &ps)
	switch {
	case Unreachable(err):
		return nil, false, err
	case err != nil || ps.Models == nil:
		return nil, false, nil
	}
	lengths = map[string]int{}
	for _, m := range *ps.Models {
		for _, name := range []string{m.Name, m.Model, strings.TrimSuffix(m.Name, ":latest")} {
			if name != "" && m.ContextLength > 0 {
				lengths[name] = m.ContextLength
			}
		}
	}
	return lengths, true, nil
}

// readLlamaCpp fills Slots and Running from /slots, Running and Waiting from
// /metrics when the server runs with --metrics, and Resident from /models.
func readLlamaCpp(ctx context.Context, c Getter, root Endpoint, r *Result) {
	var slots []llamacppSlot
	if err := c.GetJSON(ctx, root.URL("/slots"), &slots); err == nil {
		r.Slots = len(slots)
		running := 0
		for _, s := range slots {
			if s.IsProcessing != nil && *s.IsProcessing {
				running++
			}
		}
		r.Running = &running
	}
	if m, err := c.getMetrics(ctx, root.URL("/metrics")); err == nil {
		if v, ok := promSum(m, "llamacpp:requests_processing"); ok {
			r.Running = count(v)
		}
		if v, ok := promSum(m, "llamacpp:requests_deferred"); ok {
			r.Waiting = count(v)
		}
	}
	// Router mode lists every model with its load state; a single-model
	// server lists its one model, which is loaded whenever it answers.
	var models openAIModels
	if err := c.GetJSON(ctx, root.URL("/models"), &models); err != nil {
		return
	}
	router := false
	var loaded []string
	for _, m := range models.Data {
		if m.Status != nil {
			router = true
			if m.Status.Value == "loaded" {
				loaded = append(loaded, m.ID)
			}
		}
	}
	if router {
		r.Resident = append([]string{}, loaded...)
	} else {
		r.Resident = append([]string{}, r.Models...)
	}
}

// readVLLM fills Running, Waiting and KVCachePct from /metrics. vLLM's
// models are fixed at start, so every offered model is resident.
func readVLLM(ctx context.Context, c Getter, root Endpoint, r *Result) {
	r.Resident = append([]string{}, r.Models...)
	m, err := c.getMetrics(ctx, root.URL("/metrics"))
	if err != nil {
		return
	}
	if v, ok := promSum(m, "vllm:num_requests_running"); ok {
		r.Running = count(v)
	}
	if v, ok := promSum(m, "vllm:num_requests_waiting"); ok {
		r.Waiting = count(v)
	}
	// With several engines the fullest one is what limits new work.
	kv, ok := promMax(m, "vllm:kv_cache_usage_perc")
	if !ok {
		kv, ok = promMax(m, "vllm:gpu_cache_usage_perc")
	}
	if ok {
		r.KVCachePct = kv * 100
	}
}

// readSim fills GPUs from the simulator's /sim/gpus, reads the state of the
// backend it imitates, and lets /sim/state, when served, have the last word.
func readSim(ctx context.Context, c Getter, root Endpoint, r *Result) {
	if gpus, err := telemetry.PollSim(ctx, c.hc, root.URL("/sim/gpus")); err == nil {
		r.GPUs = gpus
	}
	if kind := detectBackend(ctx, c, root); kind != "openai" {
		readBackend(ctx, c, kind, root, r)
	}
	var st simState
	if err := c.GetJSON(ctx, root.URL("/sim/state"), &st); err != nil {
		return
	}
	if st.Resident != nil {
		r.Resident = append([]string{}, st.Resident...)
	}
	if st.Slots != nil {
		r.Slots = *st.Slots
	}
	r.Running, r.Waiting = st.Busy, st.Queue
	if st.Loading != nil {
		r.Loading = append([]string{}, st.Loading...)
	}
	if st.VRAMGB > 0 {
		r.VRAMTotalGB, r.VRAMUsedGB = st.VRAMGB, st.VRAMUsed
	}
}

// readBackend reads the state endpoints of one kind of backend into r.
func readBackend(ctx context.Context, c Getter, kind chat.Kind, root Endpoint, r *Result) {
	switch kind {
	case chat.KindLMStudio:
		readLMStudio(ctx, c, root, r)
	case chat.KindOllama:
		readOllama(ctx, c, root, r)
	case chat.KindLlamaCpp:
		readLlamaCpp(ctx, c, root, r)
	case chat.KindVLLM:
		readVLLM(ctx, c, root, r)
	case chat.KindSim:
		readSim(ctx, c, root, r)
	}
}

// count is a gauge's value as a count of requests.
func count(v float64) *int {
	n := int(v)
	return &n
}
