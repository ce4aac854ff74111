package sim

import (
	"fmt"
	"math"
	"pitwall/gpu/simspec"
	"strings"
	"time"
)

// Backends the simulator can impersonate.
const (
	BackendOpenAI   = "openai"
	BackendLMStudio = "lmstudio"
	BackendOllama   = "ollama"
	BackendLlamaCpp = "llamacpp"
	BackendVLLM     = "vllm"
)

// Defaults for zero fields of the specs.
const (
	DefaultSizeGB       = 5.0
	DefaultTokensPerSec = 50.0
	DefaultPrefillTPS   = 2000.0
	DefaultTTFT         = 200 * time.Millisecond
	DefaultSkill        = 0.7
	DefaultReplyTokens  = 120
	DefaultGPUName      = "Simulated RTX 4090"
	DefaultVRAMGB       = 24.0
	DefaultLoadGBps     = 1.0
	DefaultKeepAlive    = 5 * time.Minute
	DefaultRetryAfter   = time.Second
)

// MinKeepAlive is the shortest a scaled keep-alive gets on the wall clock
// (see Server.keepAlive).
const MinKeepAlive = time.Second

// modelDefaults fills the zero fields of a model ms.
func modelDefaults(m simspec.Model, name string) simspec.Model {
	if m.Name == "" {
		m.Name = name
	}
	if m.SizeGB <= 0 {
		m.SizeGB = DefaultSizeGB
	}
	if m.TokensPerSec <= 0 {
		m.TokensPerSec = DefaultTokensPerSec
	}
	if m.PrefillTPS <= 0 {
		m.PrefillTPS = DefaultPrefillTPS
	}
	if m.TTFT <= 0 {
		m.TTFT = DefaultTTFT
	}
	if m.Skill <= 0 {
		m.Skill = DefaultSkill
	}
	if m.ReplyTokens <= 0 {
		m.ReplyTokens = DefaultReplyTokens
	}
	return m
}

// thinks reports whether the model writes <think> blocks.
func thinks(m simspec.Model) bool {
	n := strings.ToLower(m.Name)
	return m.Think || strings.Contains(n, "qwen3") || strings.Contains(n, "-r1") || strings.Contains(n, "think")
}

// skillFor is the chance of a right answer in a category.
func skillFor(m simspec.Model, category string) float64 {
	if v, ok := m.Skills[category]; ok {
		return v
	}
	return m.Skill
}

// serverDefaults fills the zero fields of a server ms.
func serverDefaults(s simspec.Server) simspec.Server {
	if s.Backend == "" {
		s.Backend = BackendOpenAI
	}
	if len(s.GPUs) == 0 {
		s.GPUs = []simspec.GPU{{}}
	} else {
		s.GPUs = append([]simspec.GPU(nil), s.GPUs...)
	}
	for i := range s.GPUs {
		if s.GPUs[i].Name == "" {
			s.GPUs[i].Name = DefaultGPUName
		}
		if s.GPUs[i].VRAMGB <= 0 {
			s.GPUs[i].VRAMGB = DefaultVRAMGB
		}
	}
	if s.LoadGBps <= 0 {
		s.LoadGBps = DefaultLoadGBps
	}
	if s.KeepAlive <= 0 {
		s.KeepAlive = DefaultKeepAlive
	}
	return s
}

// vramGB is the server's VRAM over all its GPUs: a model is split over
// every GPU of its server (as llama.cpp's tensor split does), so they form
// one pool.
func vramGB(s simspec.Server) float64 {
	var t float64
	for _, g := range s.GPUs {
		t += g.VRAMGB
	}
	return t
}

// jit reports whether the backend loads models on demand.
func jit(s simspec.Server) bool {
	switch s.Backend {
	case BackendLMStudio, BackendOllama, BackendLlamaCpp:
		return true
	}
	return false
}

// normalize fills defaults into cfg and checks it, naming what to change.
func (cfg *Config) normalize() error {
	if cfg.Name == "" {
		cfg.Name = "sim"
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	switch ts := cfg.TimeScale; {
	case math.IsNaN(ts) || math.IsInf(ts, 0) || ts < 0:
		return fmt.Errorf("sim %s: time scale %g is not a number >= 0 (1 is real time, 0.01 makes a 30s load take 0.3s, 0 makes every delay zero)", cfg.Name, ts)
	case ts == 0:
		cfg.Instant = true
	}
	cfg.Spec = serverDefaults(cfg.Spec)
	switch cfg.Spec.Backend {
	case BackendOpenAI, BackendLMStudio, BackendOllama, BackendLlamaCpp, BackendVLLM:
	default:
		return fmt.Errorf("sim %s: unknown backend %q (use openai, lmstudio, ollama, llamacpp or vllm)", cfg.Name, cfg.Spec.Backend)
	}
	if len(cfg.Models) == 0 {
		return fmt.Errorf("sim %s: no models offered (list at least one in models)", cfg.Name)
	}
	offered := make(map[string]bool, len(cfg.Models))
	for _, m := range cfg.Models {
		if m == "" {
			return fmt.Errorf("sim %s: an offered model has an empty name", cfg.Name)
		}
		if offered[m] {
			return fmt.Errorf("sim %s: model %q offered twice", cfg.Name, m)
		}
		offered[m] = true
	}
	vram := vramGB(cfg.Spec)
	var preloadGB float64
	for _, p := range cfg.Spec.Preload {
		if !offered[p] {
			return fmt.Errorf("sim %s: preload model %q is not among the offered models %v", cfg.Name, p, cfg.Models)
		}
		preloadGB += cfg.model(p).SizeGB
	}
	switch cfg.Spec.Backend {
	case BackendOpenAI:
		// A hosted API has no VRAM we could run out of.
	case BackendVLLM:
		var all float64
		for _, m := range cfg.Models {
			all += cfg.model(m).SizeGB
		}
		if all > vram {
			return fmt.Errorf("sim %s: vllm keeps every offered model resident, and they take %.1f GB of %.1f GB VRAM (offer fewer models or add GPUs)", cfg.Name, all, vram)
		}
	default:
		for _, m := range cfg.Models {
			if sz := cfg.model(m).SizeGB; sz > vram {
				return fmt.Errorf("sim %s: model %q takes %.1f GB but the server has %.1f GB of VRAM (give it more or larger GPUs, or a smaller size_gb)", cfg.Name, m, sz, vram)
			}
		}
		if preloadGB > vram {
			return fmt.Errorf("sim %s: preloaded models take %.1f GB of %.1f GB VRAM (preload fewer)", cfg.Name, preloadGB, vram)
		}
	}
	return nil
}

// model is the ms of an offered model, defaults filled.
func (cfg *Config) model(name string) simspec.Model {
	return modelDefaults(cfg.Catalog[name], name)
}
