package gpu

import "pitwall/gpu/chat"

// ServerConfig is what the fleet needs to know of one server.
type ServerConfig struct {
	Name   string
	URL    string    // base URL including /v1
	Kind   chat.Kind // openai | lmstudio | ollama | llamacpp | vllm | sim ("" = detect)
	Slots  int
	GPUs   []int
	APIKey string // resolved from api_key_env; never logged or stored
	// Models, when set, is the list of models the server offers, and the
	// fleet does not need to ask /v1/models.
	Models []string
}
