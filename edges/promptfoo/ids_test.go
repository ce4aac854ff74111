package promptfoo

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pitwall/config"
)

// loadYAML writes body as a promptfoo config and loads it through a
// pitwall config, as a run does: its tests and the warnings it gives.
func loadYAML(t *testing.T, body string) ([]config.Test, []string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "pf.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	toml := "name = \"t\"\nbattery = \"pf.yaml\"\nmodels = [\"m1\", \"m2\"]\n\n[[servers]]\nname = \"s\"\nurl = \"http://127.0.0.1:9/v1\"\nkind = \"openai\"\n"
	cfgPath := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(cfgPath, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Tests, cfg.Warnings
}

// TestPromptfooTestsCarryPromptPrixsIDs: each (test, prompt) has the id
// prompt-prix's PromptfooLoader gives it as an alias when it differs from
// pitwall's, in the same order (a second prompt's test is base-2).
func TestPromptfooTestsCarryPromptPrixsIDs(t *testing.T) {
	tests, _ := loadYAML(t, `prompts: ["{{q}}", {id: terse, raw: "{{q}}!"}]
tests:
  - description: Weather in Tokyo
    vars: {q: a, test_id: w_tokyo}
  - metadata: {test_id: same}
    vars: {q: b}
  - vars: {q: c}
`)
	want := []struct {
		id    string
		alias []string
	}{
		{"w_tokyo/p1", []string{"weather-in-tokyo"}},
		{"w_tokyo/terse", []string{"weather-in-tokyo-2"}},
		{"same/p1", []string{"same"}},
		{"same/terse", []string{"same-2"}},
		{"test-3/p1", []string{"promptfoo_3"}},
		{"test-3/terse", []string{"promptfoo_3-2"}},
	}
	if len(tests) != len(want) {
		t.Fatalf("%d tests, want %d", len(tests), len(want))
	}
	for i, w := range want {
		if tests[i].ID != w.id || !slices.Equal(tests[i].Aliases, w.alias) {
			t.Errorf("test %d: %q aliases %q, want %q aliases %q", i, tests[i].ID, tests[i].Aliases, w.id, w.alias)
		}
	}
	one, _ := loadYAML(t, "prompts: [\"{{q}}\"]\ntests:\n  - metadata: {test_id: same}\n    vars: {q: b}\n")
	if len(one[0].Aliases) != 0 {
		t.Errorf("an id prompt-prix derives alike has no alias: %q", one[0].Aliases)
	}
}
