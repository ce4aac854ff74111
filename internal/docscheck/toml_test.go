package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"pitwall/config"
)

// TestDocsTOMLExamplesLoad reads every ```toml block of the pages: a
// battery ([[tests]]) must load as one, a whole config (with battery =)
// must load and validate as one (its battery a stand-in of one test), and
// a fragment of a config may hold only keys config knows.
func TestDocsTOMLExamplesLoad(t *testing.T) {
	root := repoRoot(t)
	keys := map[string]bool{}
	configKeys(reflect.TypeOf(config.Config{}), "", keys)
	n := 0
	for _, page := range pages(root) {
		rel, _ := filepath.Rel(root, page)
		for _, b := range tomlBlocks(t, page) {
			n++
			if err := checkTOML(t.TempDir(), b.text, keys); err != nil {
				t.Errorf("%s:%d: %v", rel, b.line, err)
			}
		}
	}
	if n < 3 {
		t.Fatalf("found only %d toml blocks in the pages", n)
	}
}

type block struct {
	line int
	text string
}

func tomlBlocks(t *testing.T, path string) []block {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```toml":
			cur = &block{line: i + 1}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	return out
}

func checkTOML(dir, text string, keys map[string]bool) error {
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		return fmt.Errorf("not TOML: %v", err)
	}
	switch {
	case doc["tests"] != nil && len(doc) == 1:
		if _, isList := doc["tests"].([]map[string]any); !isList {
			return nil // a fragment of a test ([tests.mock_tools]): not whole
		}
		p := filepath.Join(dir, "battery.toml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
		_, err := config.LoadBattery(p)
		return err
	case doc["battery"] != nil:
		battery, _ := doc["battery"].(string)
		bp := filepath.Join(dir, battery)
		if err := os.MkdirAll(filepath.Dir(bp), 0o755); err != nil {
			return err
		}
		stand := "[[tests]]\nid = \"t\"\nuser = \"Say hello.\"\n"
		if err := os.WriteFile(bp, []byte(stand), 0o644); err != nil {
			return err
		}
		p := filepath.Join(dir, "pitwall.toml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
		_, err := config.Load(p, config.Overrides{}, func(string) string { return "" })
		return err
	}
	var bad []string
	walkKeys(doc, "", keys, &bad)
	if len(bad) > 0 {
		return fmt.Errorf("no such config key: %s", strings.Join(bad, ", "))
	}
	return nil
}

// walkKeys reports the paths of v that are no config key; below a key
// that holds a value (a map of skills, a check's args) anything goes.
func walkKeys(v any, prefix string, keys map[string]bool, bad *[]string) {
	switch v := v.(type) {
	case []map[string]any:
		for _, m := range v {
			walkKeys(m, prefix, keys, bad)
		}
	case map[string]any:
		for k, sub := range v {
			p := strings.TrimPrefix(prefix+"."+k, ".")
			leaf, ok := keys[p]
			if !ok {
				p = strings.TrimPrefix(prefix+".MODEL", ".")
				leaf, ok = keys[p]
			}
			switch {
			case !ok:
				*bad = append(*bad, strings.TrimPrefix(prefix+"."+k, "."))
			case !leaf:
				walkKeys(sub, p, keys, bad)
			}
		}
	}
}

// The TOML check: a key config does not know, and a config that does not
// validate, are reported; the examples' shapes are not.
func TestTheTOMLCheckTellsStaleFromLive(t *testing.T) {
	keys := map[string]bool{}
	configKeys(reflect.TypeOf(config.Config{}), "", keys)
	for _, tt := range []struct {
		text  string
		stale bool
	}{
		{"[[scoring.judges]]\nname = \"j\"\nmodel = \"m\"\nurl = \"https://x/v1\"\napi_key_env = \"K\"\n", false},
		{"[[scoring.judges]]\nname = \"j\"\nmodle = \"m\"\n", true},
		{"[prices.gpt]\nprice_in = 1\n", false},
		{"[run]\nmax_tokenz = 5\n", true},
		{"[[tests]]\nid = \"a\"\nuser = \"hi\"\n", false},
		{"[[tests]]\nid = \"a\"\nuser = \"hi\"\n  [[tests.checks]]\n  type = \"no-such-check\"\n", true},
		{"  [tests.mock_tools]\n  f = { _default = \"ok\" }\n", false},
		{"battery = \"b.toml\"\nmodels = [\"m\"]\n[[servers]]\nname = \"s\"\nurl = \"http://127.0.0.1:1/v1\"\n", false},
		{"battery = \"b.toml\"\nmodels = [\"m\"]\n[[servers]]\nname = \"s\"\nurl = \"http://127.0.0.1:1/v1\"\nslots = 5000\n", true},
	} {
		err := checkTOML(t.TempDir(), tt.text, keys)
		if (err != nil) != tt.stale {
			t.Errorf("%q: reported %v, want stale %v", tt.text, err, tt.stale)
		}
	}
}
