package simspec

import "time"

// Model describes one simulated model. Zero fields take defaults.
type Model struct {
	Name         string             `toml:"name" json:"name"`
	SizeGB       float64            `toml:"size_gb" json:"size_gb"`               // VRAM it takes when loaded (default 5)
	TokensPerSec float64            `toml:"tokens_per_sec" json:"tokens_per_sec"` // single-stream decode rate (default 50)
	PrefillTPS   float64            `toml:"prefill_tps" json:"prefill_tps"`       // prompt tokens per second (default 2000)
	TTFT         time.Duration      `toml:"ttft" json:"ttft"`                     // base time to first token (default 200ms)
	Skill        float64            `toml:"skill" json:"skill"`                   // chance of a right answer, 0..1 (default 0.7)
	Skills       map[string]float64 `toml:"skills" json:"skills"`                 // per test category, overrides Skill
	ReplyTokens  int                `toml:"reply_tokens" json:"reply_tokens"`     // typical reply length (default 120)
	// Context is the context the model is loaded with (Ollama's num_ctx,
	// llama.cpp's n_ctx; default 8192). A longer prompt is refused by
	// llama.cpp and cut silently by Ollama, which then reports
	// prompt_tokens equal to it, as the real one does.
	Context int `toml:"context" json:"context"`
	// JudgeErrorRate is the chance that, as a judge, it gets a verdict wrong.
	JudgeErrorRate float64 `toml:"judge_error_rate" json:"judge_error_rate"`
	// Think makes it wrap its judge reasoning in <think>…</think>, as
	// reasoning models do. Names with "qwen3", "-r1" or "think" think too.
	Think bool `toml:"think" json:"think"`
}

// GPU is one simulated GPU.
type GPU struct {
	Name   string  `toml:"name" json:"name"`       // default "Simulated RTX 4090"
	VRAMGB float64 `toml:"vram_gb" json:"vram_gb"` // default 24
}

// Faults injects failures into a server. Rates are per request, 0..1.
type Faults struct {
	ErrorRate     float64       `toml:"error_rate" json:"error_rate"`           // 500 with an OpenAI error body
	RateLimitRate float64       `toml:"rate_limit_rate" json:"rate_limit_rate"` // 429 with Retry-After
	RetryAfter    time.Duration `toml:"retry_after" json:"retry_after"`         // default 1s (scaled)
	HangRate      float64       `toml:"hang_rate" json:"hang_rate"`             // never answer until the client gives up
	CutRate       float64       `toml:"cut_rate" json:"cut_rate"`               // stream closed mid-way, no [DONE]
	MalformedRate float64       `toml:"malformed_rate" json:"malformed_rate"`   // a chunk that is not JSON
	CrashAfter    int           `toml:"crash_after" json:"crash_after"`         // close the listener after N requests (0 = never)
	RestartAfter  time.Duration `toml:"restart_after" json:"restart_after"`     // listen again on the same port after a crash (0 = stay down)

	// The Batch API's faults (backend openai), per batch, counted over the
	// batches the server creates from 1: the first BatchFail fail
	// validation; the next BatchExpire expire with half their requests
	// never run. BatchHold keeps every batch in_progress, running nothing,
	// for as long as it is set (SetFaults lifts it).
	BatchFail   int  `toml:"batch_fail" json:"batch_fail"`
	BatchExpire int  `toml:"batch_expire" json:"batch_expire"`
	BatchHold   bool `toml:"batch_hold" json:"batch_hold"`
}

// Server is the simulated hardware and behaviour of one server.
type Server struct {
	Backend   string        `toml:"backend" json:"backend"`       // lmstudio | ollama | llamacpp | vllm | openai (default openai)
	GPUs      []GPU         `toml:"gpus" json:"gpus"`             // default one 24 GB GPU
	LoadGBps  float64       `toml:"load_gbps" json:"load_gbps"`   // model load bandwidth (default 1 GB/s: a 5 GB model loads in 5 s)
	Preload   []string      `toml:"preload" json:"preload"`       // models resident at start (vllm: all offered models)
	KeepAlive time.Duration `toml:"keep_alive" json:"keep_alive"` // ollama: unload after idle (default 5m; scaled, but not under 1s)
	Faults    Faults        `toml:"faults" json:"faults"`
}
