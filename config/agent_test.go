package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// An agent battery as prompt-prix writes one: mode "react", mock_tools
// keyed by the call's argument values, and "_default".
const reactBattery = `{"prompts": [
  {"id": "sort-files", "name": "Sort the downloads", "severity": "critical",
   "system": "You organise files with the tools given.",
   "user": "Move each file in downloads/ to docs/ or images/.",
   "mode": "react", "max_iterations": 8,
   "tools": [
     {"type": "function", "function": {"name": "list_dir", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
     {"type": "function", "function": {"name": "move_file", "parameters": {"type": "object", "properties": {"src": {"type": "string"}, "dst": {"type": "string"}}}}}
   ],
   "mock_tools": {
     "list_dir": {"downloads/": "a.pdf\nb.png", "_default": "(empty)"},
     "move_file": {"{\"dst\": \"docs/a.pdf\", \"src\": \"downloads/a.pdf\"}": "moved a.pdf", "downloads/b.png": "moved b.png", "_default": {"ok": true}}
   },
   "pass_criteria": "Lists downloads/ and moves a.pdf to docs/ and b.png to images/"},
  {"id": "default-iterations", "user": "Go.", "mode": "react",
   "tools": [{"type": "function", "function": {"name": "list_dir"}}]}
]}`

func TestAgentTestsKeepModeIterationsAndMocks(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(p, []byte(reactBattery), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := LoadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	a := tests[0]
	if a.Mode != ModeAgent || a.MaxIterations != 8 || a.Severity != "critical" {
		t.Errorf("mode %q, max_iterations %d, severity %q", a.Mode, a.MaxIterations, a.Severity)
	}
	want := MockTools{
		"list_dir":  {"downloads/": "a.pdf\nb.png", "_default": "(empty)"},
		"move_file": {`{"dst": "docs/a.pdf", "src": "downloads/a.pdf"}`: "moved a.pdf", "downloads/b.png": "moved b.png", "_default": `{"ok":true}`},
	}
	if !reflect.DeepEqual(a.MockTools, want) {
		t.Errorf("mock_tools = %#v\nwant %#v", a.MockTools, want)
	}
	if conv := a.Conversation(); len(conv) != 2 || conv[0].Role != "system" || conv[1].Content != "Move each file in downloads/ to docs/ or images/." {
		t.Errorf("the loop starts from %+v", conv)
	}
	if tests[1].MaxIterations != DefaultMaxIterations {
		t.Errorf("default max_iterations = %d", tests[1].MaxIterations)
	}
}

func TestMockToolsObserveAsPromptPrixDoes(t *testing.T) {
	t.Parallel()
	m := MockTools{
		"read_file": {"config.json": `{"port": 8080}`, "_default": "no such file"},
		"move_file": {`{"dst": "docs/a.pdf", "src": "downloads/a.pdf"}`: "moved a.pdf", "b.png": "moved b.png"},
		"count":     {"3": "three", "true": "yes"},
	}
	tests := []struct {
		name, tool, args string
		want             string
		ok               bool
	}{
		{"first argument's value", "read_file", `{"path": "config.json"}`, `{"port": 8080}`, true},
		{"default", "read_file", `{"path": "other.json"}`, "no such file", true},
		{"whole arguments, any key order and spacing", "move_file", `{"src":"downloads/a.pdf","dst":"docs/a.pdf"}`, "moved a.pdf", true},
		{"a later argument's value", "move_file", `{"src": "downloads/b.png", "dst": "b.png"}`, "moved b.png", true},
		{"a number as JSON writes it", "count", `{"n": 3}`, "three", true},
		{"a boolean", "count", `{"n": true}`, "yes", true},
		{"no match and no default", "move_file", `{"src": "x"}`, `Error: No mock response for move_file({"src": "x"})`, false},
		{"an unknown tool", "delete_file", `{}`, "Error: No mock response for delete_file({})", false},
		{"arguments that are not JSON", "read_file", `{path`, "no such file", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := m.Observe(tt.tool, tt.args)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Observe = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
			if !ok && !strings.HasPrefix(got, NoMockPrefix) {
				t.Errorf("an unanswered call's observation %q does not start with %q", got, NoMockPrefix)
			}
		})
	}
}

func TestAgentFieldsAreValidated(t *testing.T) {
	t.Parallel()
	tools := `[[tests.tools]]
type = "function"
function = { name = "list_dir" }
`
	tests := []struct {
		name  string
		body  string
		field string
		sub   string
	}{
		{"unknown mode", "[[tests]]\nid = \"a\"\nuser = \"x\"\nmode = \"loop\"\n", "tests[0].mode", `unknown mode "loop"`},
		{"agent without tools", "[[tests]]\nid = \"a\"\nuser = \"x\"\nmode = \"agent\"\n", "tests[0].mode", "needs tools"},
		{"max_iterations without agent", "[[tests]]\nid = \"a\"\nuser = \"x\"\nmax_iterations = 3\n", "tests[0].max_iterations", "for agent tests"},
		{"negative max_iterations", "[[tests]]\nid = \"a\"\nuser = \"x\"\nmode = \"agent\"\nmax_iterations = -1\n" + tools, "tests[0].max_iterations", "1 or more"},
		{"mock of a tool not offered", "[[tests]]\nid = \"a\"\nuser = \"x\"\nmode = \"agent\"\nmock_tools = { list_dri = { _default = \"x\" } }\n" + tools,
			`tests[0].mock_tools.list_dri`, "did you mean `list_dir`?"},
		{"mocks of the wrong shape", "[[tests]]\nid = \"a\"\nuser = \"x\"\nmode = \"agent\"\nmock_tools = { list_dir = \"x\" }\n" + tools,
			"tests[0].mock_tools", "must map argument values"},
		{"mocks without agent", "[[tests]]\nid = \"a\"\nuser = \"x\"\nmock_tools = { list_dir = { _default = \"x\" } }\n" + tools,
			"tests[0].mock_tools", "for agent tests"},
		{"unknown severity", "[[tests]]\nid = \"a\"\nuser = \"x\"\nseverity = \"critcal\"\n", "tests[0].severity", "did you mean `critical`?"},
		{"expect of two words", "[[tests]]\nid = \"a\"\nuser = \"x\"\nexpect = \"a pass\"\n", "tests[0].expect", "not a verdict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "b.toml")
			if err := os.WriteFile(p, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadBattery(p)
			wantErr(t, err, p, e2line(t, p, tt.field), tt.field, tt.sub)
		})
	}
}

// e2line finds the line a field's key is written on in a small TOML file:
// the line of its last key, or of the [[tests]] header for the test itself.
func e2line(t *testing.T, file, field string) int {
	t.Helper()
	key := field[strings.LastIndexByte(field, '.')+1:]
	if i := strings.IndexByte(key, '['); i >= 0 {
		key = key[:i]
	}
	data, _ := os.ReadFile(file)
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key+" ") || strings.HasPrefix(strings.TrimSpace(l), key+"=") {
			return i + 1
		}
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, key) {
			return i + 1
		}
	}
	return 1
}

func TestExpectBecomesAVerdictCheck(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "b.toml")
	body := "[[tests]]\nid = \"judge-1\"\nuser = \"Grade: 2+2=5\"\nexpect = \"fail\"\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := LoadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	if tt := tests[0]; tt.Expect != "FAIL" || len(tt.Checks) != 1 || tt.Checks[0].Type != "verdict" || tt.Checks[0].Value != "FAIL" {
		t.Errorf("expect %q, checks %+v", tt.Expect, tt.Checks)
	}
}
