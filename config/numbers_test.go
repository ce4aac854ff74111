package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run's cells are allocated before its first request, so models × tests
// × repeat is bounded as a whole: a warning saying the memory past
// warnCells, an error at repeat past maxCells.
func TestTheCellsARunHoldsAreBounded(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "[[tests]]\nid = \"t%d\"\nuser = \"hi\"\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.toml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, models string
		repeat       int
		warn, fatal  bool
	}{
		{"a small run says nothing", `["m1"]`, 10, false, false},
		{"300,000 cells warn of their memory", `["m1", "m2", "m3"]`, 1000, true, false},
		{"3,000,000 cells are refused", `["m1", "m2", "m3"]`, 10000, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "c.toml")
			text := fmt.Sprintf("battery = \"b.toml\"\nmodels = %s\n[run]\nrepeat = %d\n[[servers]]\nname = \"g\"\nurl = \"http://127.0.0.1:1/v1\"\n",
				tt.models, tt.repeat)
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := Load(p, Overrides{}, func(string) string { return "" })
			if tt.fatal {
				wantErr(t, err, p, 4, "run.repeat", "3000000 cells", "MB before the first request")
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			warned := strings.Contains(strings.Join(c.Warnings, "\n"), "MB of memory")
			if warned != tt.warn {
				t.Errorf("warnings %q: want a memory warning %v", c.Warnings, tt.warn)
			}
		})
	}
}
