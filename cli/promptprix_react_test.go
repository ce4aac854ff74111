package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// reactFile is prompt-prix's ReAct benchmark as prompt-prix ships it.
const reactFile = "../edges/promptprix/testdata/prompt-prix/react_file_categorization_benchmark.json"

// reactConfig runs the real benchmark on three simulated models of
// different skill at loops, with a ledger of its own in dir.
func reactConfig(t *testing.T, dir string) (cfg, db string) {
	t.Helper()
	battery, err := filepath.Abs(reactFile)
	if err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "ledger.db")
	text := `name = "react"
battery = ` + strconv.Quote(battery) + `
models = ["coherent", "wobbly", "stuck"]
[run]
timeout = "30s"
retries = 1
[[sim.models]]
name = "coherent"
skill = 1.0
skills = { agent = 1.0 }
[[sim.models]]
name = "wobbly"
skill = 0.8
skills = { agent = 0.75 }
[[sim.models]]
name = "stuck"
skill = 0.5
skills = { agent = 0.0 }
[[servers]]
name = "gpu0"
kind = "sim"
slots = 3
models = ["coherent", "wobbly", "stuck"]
[scoring]
mode = "deterministic"
`
	cfg = filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, db
}

// plainRun is text that reads the same in every export format.
var plainRun = regexp.MustCompile(`[A-Za-z0-9./ ]{6,}`)

// prompt-prix's own ReAct benchmark, run headless on the simulator: most
// cells are loops of several steps, the grid shows every cell, and each
// export carries the steps (a tool's name and what it was answered with).
func TestPromptPrixsReActBenchmarkRunsOnTheSimulatorWithTrajectories(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, db := reactConfig(t, dir)
	code, out, stderr := inproc(t, "run", cfg, "--headless", "--time-scale", "0", "--db", db)
	if code != 0 && code != 1 { // 1: cells failed, as a stuck model's do
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	tests := []string{"categorize_6_files_with_dirs", "categorize_6_files_create_dirs", "categorize_with_eisdir_recovery",
		"categorize_ambiguous_content", "categorize_documents_by_type"}
	for _, name := range append(tests, "coherent", "wobbly", "stuck") {
		if !strings.Contains(out, name) {
			t.Errorf("the headless grid lacks %q:\n%s", name, out)
		}
	}

	code, js, stderr := inproc(t, "export", "last", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("export json: exit %d: %s", code, stderr)
	}
	var x struct {
		Cells []struct {
			Model, Test string
			Steps       []struct {
				Calls []struct {
					Name        string  `json:"name"`
					Observation *string `json:"observation"`
				} `json:"calls"`
			} `json:"steps"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(js), &x); err != nil {
		t.Fatalf("the JSON export: %v", err)
	}
	if len(x.Cells) != len(tests)*3 {
		t.Fatalf("%d cells exported, want %d", len(x.Cells), len(tests)*3)
	}
	// What each multi-step cell's loop did: a tool it called and the start
	// of an observation it got back, to look for in the other exports.
	type seen struct{ cell, tool, obs string }
	var multi []seen
	for _, c := range x.Cells {
		if len(c.Steps) < 2 {
			continue
		}
		s := seen{cell: c.Model + " × " + c.Test}
		for _, st := range c.Steps {
			for _, call := range st.Calls {
				if call.Observation != nil && s.obs == "" {
					// A fragment from the observation's start (Markdown clips
					// it) with no character any format escapes.
					o := []rune(*call.Observation)
					if m := plainRun.FindString(string(o[:min(len(o), 100)])); m != "" {
						s.tool, s.obs = call.Name, m
					}
				}
			}
		}
		if s.obs == "" {
			t.Errorf("%s: %d steps and no observation to look for", s.cell, len(c.Steps))
			continue
		}
		multi = append(multi, s)
	}
	if 2*len(multi) <= len(x.Cells) {
		t.Fatalf("%d of %d cells made two steps or more, want most", len(multi), len(x.Cells))
	}

	for _, format := range []string{"md", "html", "csv", "junit"} {
		code, text, stderr := inproc(t, "export", "last", "--db", db, "--format", format)
		if code != 0 {
			t.Fatalf("export %s: exit %d: %s", format, code, stderr)
		}
		for _, s := range multi {
			if !strings.Contains(text, s.tool) || !strings.Contains(text, s.obs) {
				t.Errorf("the %s export lacks %s's steps (%s, %q)", format, s.cell, s.tool, s.obs)
			}
		}
		if format == "md" && !strings.Contains(text, "agent cells' trajectories") {
			t.Error("the Markdown export lists no trajectories")
		}
	}
}
