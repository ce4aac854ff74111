package promptprix

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"pitwall/config"
)

func TestExpectedKeysBecomeChecks(t *testing.T) {
	cases := []struct {
		name      string
		expected  map[string]any
		wantTypes []string
		wantProbs []string // fields
	}{
		{"a call", map[string]any{"tool_name": "f", "params": map[string]any{"a": 1.0}}, []string{"tool-call"}, nil},
		{"the first call", map[string]any{"tool_name": "f", "match_mode": "first_step"}, []string{"first-tool-call"}, nil},
		{"contains splits text from other arguments", map[string]any{"tool_name": "f", "match_mode": "contains", "params": map[string]any{"path": "report", "n": 2.0}},
			[]string{"tool-call", "tool-args-contains"}, nil},
		{"no call", map[string]any{"no_tool_call": true}, []string{"no-tool-call"}, nil},
		{"no_tool_call false asks nothing", map[string]any{"no_tool_call": false}, nil, nil},
		{"params without tool_name", map[string]any{"params": map[string]any{"a": 1.0}}, nil, []string{"params"}},
		{"no_tool_call not a bool", map[string]any{"no_tool_call": "yes"}, nil, []string{"no_tool_call"}},
		{"a params_ key that is no object", map[string]any{"params_types": "int"}, nil, []string{"params_types"}},
		{"notes are for the judge", map[string]any{"notes": "be kind"}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checks, probs := expectedChecks(tc.expected, nil, "t")
			var types, fields []string
			for _, c := range checks {
				types = append(types, c.Type)
			}
			for _, p := range probs {
				fields = append(fields, p.Field)
			}
			if !reflect.DeepEqual(types, tc.wantTypes) || !reflect.DeepEqual(fields, tc.wantProbs) {
				t.Errorf("checks %v, problems at %v; want %v and %v", types, fields, tc.wantTypes, tc.wantProbs)
			}
		})
	}
}

// A {"prompts": [...]} file reaches this package through config, which
// asks the registered formats whose the object is.
func TestPromptsLoadThroughConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pp.json")
	body := `{"test_suite": "s", "prompts": [
  {"id": "plain", "user": "hi"},
  {"id": "loop", "user": "go", "mode": "react", "tools": [{"type": "function", "function": {"name": "f"}}], "mock_tools": {"f": {"_default": "ok"}}}
]}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := config.LoadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 2 {
		t.Fatalf("got %d tests, want 2", len(tests))
	}
	if tests[0].System != promptPrixSystem {
		t.Errorf("a prompt without system gets prompt-prix's: %q", tests[0].System)
	}
	if tests[1].Mode != config.ModeAgent || tests[1].MaxIterations != config.DefaultMaxIterations {
		t.Errorf("react is an agent test: mode %q, max_iterations %d", tests[1].Mode, tests[1].MaxIterations)
	}
}
