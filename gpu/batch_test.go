package gpu

import (
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
)

func TestAChatBodyCarriesTheTemperatureAndDoesNotStream(t *testing.T) {
	zero, seed := 0.0, 3
	body, err := ChatBody(chat.Request{Model: "m", Messages: []chat.Message{{Role: "user", Content: "x"}}, Temperature: &zero, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if !strings.Contains(s, `"temperature":0`) || strings.Contains(s, `"stream":true`) || strings.Contains(s, "stream_options") {
		t.Errorf("body %s: want temperature 0 written out and no streaming", s)
	}
}

func TestOnlyServersThatMayHaveABatchAPIGetABatchClient(t *testing.T) {
	f := NewFleet([]ServerConfig{
		{Config: client.Config{Name: "hosted", URL: deadURL(t), Kind: chat.KindOpenAI}, Models: []string{"m"}},
		{Config: client.Config{Name: "sim", URL: deadURL(t), Kind: chat.KindSim}, Models: []string{"m"}},
		{Config: client.Config{Name: "lms", URL: deadURL(t), Kind: chat.KindLMStudio}, Models: []string{"m"}},
		{Config: client.Config{Name: "ollama", URL: deadURL(t), Kind: chat.KindOllama}, Models: []string{"m"}},
	}, Options{ProbeInterval: -1})
	t.Cleanup(f.Close)
	for name, want := range map[string]bool{"hosted": true, "sim": true, "lms": false, "ollama": false, "nobody": false} {
		c, ok := f.BatchClient(name)
		if ok != want || ok && c.Server() != name {
			t.Errorf("BatchClient(%s) = %v, %v; want %v", name, c, ok, want)
		}
	}
}
