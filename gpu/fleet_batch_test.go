package gpu

import (
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/oaitest"
)

func TestOnlyServersThatMayHaveABatchAPIGetABatchClient(t *testing.T) {
	f := NewFleet([]ServerConfig{
		{Config: client.Config{Name: "hosted", URL: oaitest.ClosedURL(t), Kind: chat.KindOpenAI}, Models: []string{"m"}},
		{Config: client.Config{Name: "sim", URL: oaitest.ClosedURL(t), Kind: chat.KindSim}, Models: []string{"m"}},
		{Config: client.Config{Name: "lms", URL: oaitest.ClosedURL(t), Kind: chat.KindLMStudio}, Models: []string{"m"}},
		{Config: client.Config{Name: "ollama", URL: oaitest.ClosedURL(t), Kind: chat.KindOllama}, Models: []string{"m"}},
	}, Options{ProbeInterval: -1})
	t.Cleanup(f.Close)
	for name, want := range map[string]bool{"hosted": true, "sim": true, "lms": false, "ollama": false, "nobody": false} {
		c, ok := f.BatchClient(name)
		if ok != want || ok && c.Server() != name {
			t.Errorf("BatchClient(%s) = %v, %v; want %v", name, c, ok, want)
		}
	}
}
