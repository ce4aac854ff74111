package judge

import (
	"pitwall/gpu/chat"
	"testing"
)

func TestCacheKeyCoversEveryField(t *testing.T) {
	base := KeyInput{
		BaseURL: "http://127.0.0.1:1234/v1", Model: "gemma", TemplateID: "rubric-v1", TemplateVersion: "1",
		TemplateHash: "abc", Temperature: 0.7, MaxTokens: 512, Seed: 42, Sample: 0,
		Input: Input{System: "s", Prompt: "p", Tools: []chat.Tool{weatherTool}, Reply: "c", Criteria: "k", Reference: "r"},
	}
	key := CacheKey(base)
	if len(key) != 64 || key != CacheKey(base) {
		t.Fatalf("CacheKey = %q, want 64 stable hex digits", key)
	}
	changes := map[string]func(k *KeyInput){
		"base url":         func(k *KeyInput) { k.BaseURL = "http://127.0.0.1:1235/v1" },
		"model":            func(k *KeyInput) { k.Model = "qwen" },
		"template id":      func(k *KeyInput) { k.TemplateID = "strict-v1" },
		"template version": func(k *KeyInput) { k.TemplateVersion = "2" },
		"template hash":    func(k *KeyInput) { k.TemplateHash = "abd" },
		"temperature":      func(k *KeyInput) { k.Temperature = 0 },
		"max tokens":       func(k *KeyInput) { k.MaxTokens = 1024 },
		"seed":             func(k *KeyInput) { k.Seed = 43 },
		"sample":           func(k *KeyInput) { k.Sample = 1 },
		"system":           func(k *KeyInput) { k.Input.System = "S" },
		"prompt":           func(k *KeyInput) { k.Input.Prompt = "P" },
		"tools":            func(k *KeyInput) { k.Input.Tools = nil },
		"tool schema": func(k *KeyInput) {
			tool := weatherTool
			tool.Function.Description = "weather"
			k.Input.Tools = []chat.Tool{tool}
		},
		"candidate": func(k *KeyInput) { k.Input.Reply = "C" },
		"criteria":  func(k *KeyInput) { k.Input.Criteria = "K" },
		"reference": func(k *KeyInput) { k.Input.Reference = "R" },
		// The same bytes moved from one field to the next must not collide.
		"field boundary": func(k *KeyInput) { k.Input.System, k.Input.Prompt = "sp", "" },
	}
	for name, change := range changes {
		k := base
		change(&k)
		if CacheKey(k) == key {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
}

func TestCacheKeyTreatsNoToolsAlike(t *testing.T) {
	a := KeyInput{Input: Input{Tools: nil}}
	b := KeyInput{Input: Input{Tools: []chat.Tool{}}}
	if CacheKey(a) != CacheKey(b) {
		t.Error("nil and empty tools give different keys")
	}
}
