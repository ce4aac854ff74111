package gpu

import (
	"pitwall/gpu/chat"
	"time"
)

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
	// MaxReplyBytes caps one response body as it arrives, SSE framing
	// included: a reply past it ends chat.ClassTooLarge, keeping what came
	// before. 0 means DefaultMaxReplyBytes.
	MaxReplyBytes int64
	// FirstByteTimeout bounds the wait from sending a chat request to the
	// first byte of its reply; 0 leaves it to the call's deadline.
	FirstByteTimeout time.Duration
	// StallTimeout ends a reply whose tokens have begun and that then sends
	// nothing for this long (chat.ClassTimeout). 0 means
	// DefaultStallTimeout; negative, no stall limit.
	StallTimeout time.Duration
}
