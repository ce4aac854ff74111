package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/config"
)

func TestChoicesAreLetteredAsInspectLettersThem(t *testing.T) {
	for i, want := range map[int]string{0: "A", 1: "B", 25: "Z", 26: "AA", 27: "AB", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA"} {
		if got := choiceLabel(i); got != want {
			t.Errorf("choiceLabel(%d) = %q, want %q", i, got, want)
		}
	}
}

// A JSON array of samples reaches this package through config, which
// frames the array: registering is all it takes.
func TestAnArrayOfSamplesLoadsThroughConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "caps.json")
	body := `[{"id": "s1", "input": "Capital of France?", "target": "Paris", "metadata": {"category": "geo", "severity": "Critical"}},
 {"input": [{"role": "user", "content": "Pick one."}], "target": ["b", "B"], "choices": ["x", "y"]}]`
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
	if s := tests[0]; s.ID != "s1" || s.User != "Capital of France?" || s.Reference != "Paris" || s.Category != "geo" || s.Severity != "critical" {
		t.Errorf("first sample = %+v", s)
	}
	s := tests[1]
	if s.ID != "caps-2" {
		t.Errorf("a sample without id is named by the file and its number: %q", s.ID)
	}
	if s.User != "Pick one.\n\nA) x\nB) y" {
		t.Errorf("choices are lettered under the prompt: %q", s.User)
	}
	if !strings.HasPrefix(s.Reference, "Any of these is correct:\nb\nB") {
		t.Errorf("a list of targets is any of them: %q", s.Reference)
	}
	if !strings.HasSuffix(s.Source, "caps.json:2") {
		t.Errorf("source = %q, want the element's line", s.Source)
	}
}
