package probe

import (
	"context"
	"net/http"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/telemetry"
	"pitwall/internal/redact"
)

// Server is what a probe needs to know of a server.
type Server struct {
	Name   string
	URL    string    // base URL including /v1
	Kind   chat.Kind // "" to detect
	APIKey string    // never logged or shown
	// Models, when set, is the list configured for a server that may not
	// list its models (a hosted API).
	Models []string
}

// Result is what one probe of one server found.
type Result struct {
	Server    string
	URL       string // as configured, with its credentials masked: for showing
	Reachable bool
	Error     string    // why not reachable, or why /v1/models failed, in words
	Kind      chat.Kind // as configured, or detected when configured kind is ""
	Models    []string
	// Resident lists the models loaded now, when the backend tells; nil when
	// it cannot (a hosted API), empty when it tells that none is.
	Resident []string
	Slots    int // when the backend tells (llama.cpp /slots), else 0
	// Running and Waiting are requests in flight and queued, from the
	// backend's slots or metrics; nil when it does not tell (Ollama, a
	// hosted API, llama.cpp without --metrics for Waiting): unknown, not 0.
	Running, Waiting *int
	KVCachePct       float64              // vLLM kv_cache_usage_perc (or gpu_cache_usage_perc) * 100
	GPUs             []telemetry.GPUState // from the simulator's /sim/gpus when the server is a sim
	Latency          time.Duration
	// Status is the HTTP status GET /models answered with; 0 when it did not.
	Status int
	// Loading lists the models being loaded now, when the backend tells
	// (the simulator's /sim/state).
	Loading []string
	// VRAMTotalGB and VRAMUsedGB are the server's memory and what its
	// models hold, when the backend tells (the simulator's /sim/state); 0
	// when unknown.
	VRAMTotalGB, VRAMUsedGB float64
}

// Probe asks one server what it offers and what state it is in: GET
// {url}/models for reachability, the offered models and the latency, then the
// backend's own endpoints for residency, slots, queue and cache (see
// DetectKind for which). A server that does not answer is Reachable false
// with chat.Error saying why; the backend's own endpoints failing is not an error,
// it only leaves their fields unknown. A nil hc means http.DefaultClient;
// ctx bounds the whole probe.
func Probe(ctx context.Context, hc *http.Client, cfg Server) Result {
	r := Result{Server: cfg.Name, URL: redact.URL(cfg.URL), Kind: cfg.Kind}
	c := NewGetter(hc, cfg.APIKey)
	ep := ParseEndpoint(cfg.URL)
	modelsURL := ep.URL("/models")

	start := time.Now()
	var models openAIModels
	err := c.GetJSON(ctx, modelsURL, &models)
	r.Latency = time.Since(start)
	r.Status = probeStatus(err)
	if Unreachable(err) {
		r.Error = probeDescribe(modelsURL, err)
		return r
	}
	r.Reachable = true
	if err != nil {
		r.Error = probeDescribe(modelsURL, err)
	}
	for _, m := range models.Data {
		r.Models = append(r.Models, m.ID)
	}
	if len(r.Models) == 0 && len(cfg.Models) > 0 {
		r.Models = append([]string{}, cfg.Models...)
	}

	root := ep.Root()
	if r.Kind == "" {
		r.Kind = detectKind(ctx, c, root)
	}
	readBackend(ctx, c, r.Kind, root, &r)
	return r
}
