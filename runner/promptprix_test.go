package runner

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "pitwall/edges/promptprix" // prompt-prix's {"prompts": [...]} battery
	"pitwall/runner/history"
	"pitwall/runner/state"
)

// ppBattery is a prompt-prix battery: a test whose tool_choice prompt-prix
// only validates, and react tests that prompt-prix accepts and pitwall's
// own format would refuse (no tools; a mock for a tool not offered).
const ppBattery = `{"test_suite": "pp", "prompts": [
  {"id": "choice_none", "user": "What is 15 * 7?", "tool_choice": "none",
   "tools": [{"type": "function", "function": {"name": "calculate", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}}]},
  {"id": "react_no_tools", "mode": "react", "user": "Say hello.", "max_iterations": 3},
  {"id": "react_extra_mock", "mode": "react", "user": "Sort downloads/.", "max_iterations": 7,
   "tools": [{"type": "function", "function": {"name": "list_dir", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
             {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}],
   "mock_tools": {"list_dir": {"downloads/": "a.pdf\nb.png"}, "read_file": {"_default": "data"}, "move_file": {"_default": "moved"}}}
]}`

// ppRun runs ppBattery on the scripted agents with body added to the config.
func ppRun(t *testing.T, srv *agentServer, body string) *state.BatteryRun {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "battery.json"), []byte(ppBattery), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgText := fmt.Sprintf(`name = "pp"
battery = "battery.json"
models = ["clean"]
db = %s
[run]
retries = 0
%s
[[servers]]
name = "s"
url = %q
kind = "openai"
slots = 2
`, quote(filepath.Join(dir, "ledger.db")), body, ts.URL+"/v1")
	path := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(path, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	// The run read back whole: the live state leaves the checks to the ledger.
	h := newHarness(t, loadConfig(t, path), true)
	h.finish(t)
	b, err := history.LoadSnapshot(h.led, h.run.ID(), "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// prompt-prix never sends a battery's tool_choice: its tool_choice_none
// measures whether a model holds back from a tool it is offered, and a
// server told "none" could not call one. pitwall sends none either, unless
// the run asks for it.
func TestPromptPrixToolChoiceIsNotSent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, body string
		sent       bool
	}{
		{"prompt-prix's rule", "", false},
		{"send_tool_choice = true", "send_tool_choice = true", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newAgentServer()
			b := ppRun(t, srv, tt.body)
			srv.mu.Lock()
			bodies := srv.bodies["clean"]
			srv.mu.Unlock()
			var withTools int
			for _, body := range bodies {
				if !strings.Contains(fmt.Sprint(body["tools"]), "calculate") {
					continue // the react tests ask for no tool_choice
				}
				withTools++
				_, has := body["tool_choice"]
				if has != tt.sent {
					t.Errorf("tool_choice on the wire: %v (%v), want %v", has, body["tool_choice"], tt.sent)
				}
			}
			if withTools != 1 {
				t.Fatalf("%d requests of choice_none, want 1", withTools)
			}
			// Validation still holds the reply to tool_choice "none": the
			// scripted model calls list_dir.
			c := b.Cell(0, 0, 0)
			if c.Status != state.Failed || !failed(c, "tool_choice=none") {
				t.Errorf("choice_none: %s, checks %+v; want tool_choice=none failed", c.Status, c.Said().Checks)
			}
		})
	}
}

// prompt-prix runs a react test without tools (the model can only answer)
// and one whose mocks answer a tool it does not offer (a call to it is an
// unknown tool); both load, and both run.
func TestPromptPrixReactFilesLoadAndRun(t *testing.T) {
	t.Parallel()
	srv := newAgentServer()
	b := ppRun(t, srv, "")
	for i, id := range []string{"react_no_tools", "react_extra_mock"} {
		c := b.Cell(i+1, 0, 0)
		if c.Test != id || len(c.Said().Steps) == 0 {
			t.Errorf("%s: cell %s with %d steps", id, c.Test, len(c.Said().Steps))
		}
		if pass, reason := loopCheck(t, c); !pass {
			t.Errorf("%s: the loop failed: %s", id, reason)
		}
	}
	for _, tt := range b.Tests {
		if tt.Severity != "warning" {
			t.Errorf("%s: severity %q, want prompt-prix's default warning", tt.ID, tt.Severity)
		}
	}
}

func failed(c *state.Cell, name string) bool {
	for _, r := range c.Said().Checks {
		if r.Name == name {
			return !r.Pass
		}
	}
	return false
}
