package chat

import "testing"

func TestMatchModel(t *testing.T) {
	for _, tt := range []struct {
		name    string
		offered []string
		model   string
		want    string
		ok      bool
	}{
		{"exact", []string{"tiny-a:latest", "tiny-a"}, "tiny-a", "tiny-a", true},
		{"ollama's implicit tag", []string{"tiny-a:latest", "tiny-b:latest"}, "tiny-a", "tiny-a:latest", true},
		{"a tag is not dropped", []string{"tiny-a:latest"}, "tiny-a:q4", "", false},
		{"another tag does not match", []string{"tiny-a:q4"}, "tiny-a", "", false},
		{"case", []string{"qwen/qwen3-8b"}, "Qwen/Qwen3-8B", "qwen/qwen3-8b", true},
		{"lm studio publisher", []string{"qwen/qwen3-8b", "google/gemma-3-12b"}, "gemma-3-12b", "google/gemma-3-12b", true},
		{"two publishers: no guess", []string{"a/m", "b/m"}, "m", "", false},
		{"a suffix is not a name", []string{"qwen/qwen3-8b"}, "3-8b", "", false},
		{"unknown", []string{"tiny-a:latest"}, "tiny-bb:latest", "", false},
		{"empty name", []string{""}, "", "", false},
		{"nothing offered", nil, "m", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MatchModel(tt.offered, tt.model)
			if got != tt.want || ok != tt.ok {
				t.Errorf("MatchModel(%v, %q) = %q, %v; want %q, %v", tt.offered, tt.model, got, ok, tt.want, tt.ok)
			}
		})
	}
}
