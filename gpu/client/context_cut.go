package client

import (
	"context"
	"sync"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/probe"
)

// contexts learns the context length of each model a server holds, from
// Ollama's /api/ps, so that a reply whose prompt_tokens equals it can be
// told cut: Ollama drops a prompt's start past num_ctx and says nothing
// else. A server without /api/ps is asked once.
type contexts struct {
	get  probe.Getter
	root probe.Endpoint

	mu      sync.Mutex
	kind    chat.Kind // as configured, or as a probe detected it
	none    bool      // the server has no /api/ps
	at      time.Time
	lengths map[string]int
}

// contextsFresh is how long a read of /api/ps is trusted: a model reloaded
// with another num_ctx shows within it.
const contextsFresh = 30 * time.Second

// detected notes the kind a probe found for a server configured without one.
func (c *contexts) detected(k chat.Kind) {
	c.mu.Lock()
	c.kind = k
	c.mu.Unlock()
}

// cuts reports whether the server may cut a prompt without an error:
// Ollama (and the simulator, which may play it). Another server refuses a
// long prompt, and is never asked for /api/ps.
func (c *contexts) cuts() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.none && (c.kind == chat.KindOllama || c.kind == chat.KindSim)
}

// lengthOf is model's context length, 0 when unknown.
func (c *contexts) lengthOf(ctx context.Context, model string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.none {
		return 0
	}
	n, ok := c.lengths[model]
	if ok && time.Since(c.at) < contextsFresh {
		return n
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	lengths, ollama, err := probe.ContextLengths(rctx, c.get, c.root)
	if !ollama {
		c.none = err == nil // answered, but not as Ollama
		return 0
	}
	c.at, c.lengths = time.Now(), lengths
	return c.lengths[model]
}

// Detected tells c the kind a probe found for a server configured without
// one: an Ollama may cut a prompt silently, and c then looks for it.
func (c *Client) Detected(k chat.Kind) { c.ctx.detected(k) }

// markCut sets res.PromptCut when the prompt filled the model's context.
// Only servers that cut silently are asked (contexts.cuts).
func (c *Client) markCut(ctx context.Context, model string, res *chat.Result) {
	if res.PromptTokens <= 0 || !c.ctx.cuts() {
		return
	}
	if n := c.ctx.lengthOf(ctx, model); n > 0 && res.PromptTokens >= n {
		res.PromptCut = n
	}
}
