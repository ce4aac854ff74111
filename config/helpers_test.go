package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lineOf returns the line of the nth (1-based) line of file containing
// substr. Tests find expected lines in the fixture's own text, so a fixture
// can be edited without renumbering the tests.
func lineOf(t *testing.T, file, substr string, nth int) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	seen := 0
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, substr) {
			if seen++; seen == nth {
				return i + 1
			}
		}
	}
	t.Fatalf("%s: no line %d containing %q", file, nth, substr)
	return 0
}

// wantErr asserts that err holds an *Error for field in file at line
// (0: no line) whose text contains every sub, and that the printed message
// names the file, line and field together.
func wantErr(t *testing.T, err error, file string, line int, field string, subs ...string) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error at %s:%d %s, got none", file, line, field)
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want config.Errors, got %T: %v", err, err)
	}
	for _, e := range es {
		if e.File != file || e.Field != field || e.Line != line {
			continue
		}
		text := e.Error()
		if !strings.Contains(err.Error(), text) {
			t.Errorf("Errors.Error() does not print %q", text)
		}
		prefix := file
		if line > 0 {
			prefix += fmt.Sprintf(":%d", line)
		}
		if field != "" {
			prefix += ": " + field
		}
		if !strings.HasPrefix(text, prefix+": ") {
			t.Errorf("message %q does not start with %q", text, prefix)
		}
		for _, s := range subs {
			if !strings.Contains(text, s) {
				t.Errorf("message %q lacks %q", text, s)
			}
		}
		return e
	}
	t.Fatalf("no error at %s:%d field %q; got:\n%v", file, line, field, err)
	return nil
}

func noEnv(string) string { return "" }

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeConfig writes body to a pitwall.toml in a fresh folder, with the
// good test battery copied beside it, and returns the config's path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	bat, err := os.ReadFile(filepath.Join("testdata", "good", "batteries", "tools.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.toml"), bat, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, path string, ov Overrides, getenv func(string) string) *Config {
	t.Helper()
	c, err := Load(path, ov, getenv)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return c
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}
