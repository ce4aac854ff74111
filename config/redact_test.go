package config

import (
	"encoding/json"
	"testing"
)

// The run's record keeps what the exports, compare and show read back of
// a battery beyond its ids: each test's category and severity, and the
// loader's warnings. Tests without one are left out of the maps.
func TestRedactedJSONKeepsCategoriesSeveritiesAndWarnings(t *testing.T) {
	t.Parallel()
	c := &Config{Path: "p.toml", Tests: []Test{
		{ID: "a", Category: "tools", Severity: "critical"},
		{ID: "b", Category: "json"},
		{ID: "c", Severity: "info"},
		{ID: "d"},
	}, Warnings: []string{`assertion "python" is not run (2 tests)`}}
	var rec struct {
		Tests      []string          `json:"tests"`
		Categories map[string]string `json:"test_categories"`
		Severities map[string]string `json:"test_severities"`
		Warnings   []string          `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(c.RedactedJSON()), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Tests) != 4 || rec.Tests[3] != "d" {
		t.Errorf("tests %v: want the four ids", rec.Tests)
	}
	if len(rec.Categories) != 2 || rec.Categories["a"] != "tools" || rec.Categories["b"] != "json" {
		t.Errorf("test_categories %v: want a tools, b json", rec.Categories)
	}
	if len(rec.Severities) != 2 || rec.Severities["a"] != "critical" || rec.Severities["c"] != "info" {
		t.Errorf("test_severities %v: want a critical, c info", rec.Severities)
	}
	if len(rec.Warnings) != 1 || rec.Warnings[0] != c.Warnings[0] {
		t.Errorf("warnings %q: want %q", rec.Warnings, c.Warnings)
	}

	// A battery with none of them records none: no empty maps.
	bare := (&Config{Tests: []Test{{ID: "x"}}}).RedactedJSON()
	var m map[string]any
	if err := json.Unmarshal([]byte(bare), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"test_categories", "test_severities", "warnings"} {
		if _, ok := m[k]; ok {
			t.Errorf("a battery with no %s records %s: %v", k, k, m[k])
		}
	}
}
