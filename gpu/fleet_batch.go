package gpu

import (
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
)

// BatchClient returns the client of server when its kind may offer a Batch
// API: a hosted API (openai), the simulator, or a server whose kind is not
// known yet. Local servers (LM Studio, Ollama, llama.cpp, vLLM) have none.
// Whether it really does is the Batch API's to say (GET /v1/batches).
func (f *Fleet) BatchClient(server string) (*client.Client, bool) {
	s := f.byName[server] // fixed by NewFleet
	if s == nil {
		return nil, false
	}
	f.mu.Lock()
	kind := s.kind
	f.mu.Unlock()
	switch kind {
	case chat.KindOpenAI, chat.KindSim, "":
		return s.client, true
	}
	return nil, false
}
