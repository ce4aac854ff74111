package config

import (
	"testing"
)

const locateTOMLText = `# comment [[servers]]
name = "x"   # line 2
models = [
  "a",
  "b",
]
[run]
timeout = "5s"
note = """
[[servers]]
slots = 9
"""
'quoted key' = 1

[[servers]]
name = "s0"
[servers.sim]
backend = "ollama"
[[servers.sim.gpus]]
name = "g0"
[[servers.sim.gpus]]
name = "g1"

[[servers]]
name = "s1"
sim.backend = "vllm"
env = { key = "K", nested = { deep = 1 } }
list = [ { a = 1 },
         { b = 2 } ]
lit = 'it''s'
after = 1
`

func TestLocateTOMLFindsEachPathsLine(t *testing.T) {
	t.Parallel()
	src := locateTOML("f.toml", locateTOMLText)
	tests := []struct {
		path string
		want int
	}{
		{"name", 2},
		{"models", 3},
		{"models[0]", 4},
		{"models[1]", 5},
		{"run", 7},
		{"run.timeout", 8},
		{"run.note", 9},
		{`run."quoted key"`, 13},
		{"servers[0]", 15},
		{"servers[0].name", 16},
		{"servers[0].sim", 17},
		{"servers[0].sim.backend", 18},
		{"servers[0].sim.gpus[0]", 19},
		{"servers[0].sim.gpus[1].name", 22},
		{"servers[1]", 24},
		{"servers[1].name", 25},
		{"servers[1].sim.backend", 26},
		{"servers[1].env.key", 27},
		{"servers[1].env.nested.deep", 27},
		{"servers[1].list[1]", 29},
		{"servers[1].list[1].b", 29},
		{"servers[1].after", 31},
		// Unknown paths fall back to the nearest enclosing one.
		{"servers[1].nope", 24},
		{"servers[0].sim.gpus[1].vram_gb", 21},
		{"nothing", 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := src.Line(tt.path); got != tt.want {
				t.Errorf("line(%s) = %d, want %d", tt.path, got, tt.want)
			}
		})
	}
	// The header inside the multi-line string must not open a table.
	if _, ok := src.lines["servers[2]"]; ok {
		t.Errorf("a [[servers]] inside a string was taken as a header")
	}
	if _, ok := src.lines["run.slots"]; ok {
		t.Errorf("a key inside a string was taken as a key")
	}
}

func TestLocateJSONFindsEachValuesLine(t *testing.T) {
	t.Parallel()
	data := []byte(`{
  "tests": [
    {"id": "a",
     "checks": [
       {"type": "x"}, {"type": "y"}
     ]},

    {
      "id": "b"
    }
  ]
}`)
	src, err := LocateJSON("f.json", data, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want int
	}{
		{"tests", 2},
		{"tests[0]", 3},
		{"tests[0].id", 3},
		{"tests[0].checks", 4},
		{"tests[0].checks[1].type", 5},
		{"tests[1]", 8},
		{"tests[1].id", 9},
	}
	for _, tt := range tests {
		if got := src.Line(tt.path); got != tt.want {
			t.Errorf("line(%s) = %d, want %d", tt.path, got, tt.want)
		}
	}
}

func TestNearestSuggestsOnlyPlausibleTypos(t *testing.T) {
	t.Parallel()
	keys := []string{"max_tokens", "temperature", "timeout", "seed"}
	tests := []struct {
		in, want string
	}{
		{"max_token", "max_tokens"},
		{"temprature", "temperature"},
		{"TIMEOUT", "timeout"},
		{"colour", ""},
	}
	for _, tt := range tests {
		if got := nearest(tt.in, keys); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
