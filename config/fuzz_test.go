package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each importer takes any bytes without panicking, and what it makes stays
// in proportion to what it read: tests bounded by the input's size (and
// promptfoo's expansion cap), every error an *Error that names the file.

// fuzzSeeds adds the files of testdata and the shared batteries (when
// present) whose name ends in one of exts.
func fuzzSeeds(f *testing.F, exts ...string) {
	var files []string
	for _, glob := range []string{"testdata/batteries/*", "testdata/good/batteries/*", filepath.Join(sharedBatteries, "prompt-prix", "*")} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	for _, p := range files {
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				if data, err := os.ReadFile(p); err == nil {
					f.Add(data)
				}
			}
		}
	}
}

// checkLoad runs one importer on data and checks what came back.
func checkLoad(t *testing.T, data []byte, load func(path string, data []byte, n *Notes) ([]Test, error)) {
	path := filepath.Join("fuzz-nonexistent", "b") // file:// references find nothing beside it
	n := newNotes(path)
	tests, err := load(path, data, n)
	if err != nil {
		for _, e := range asErrors(err) {
			if e.File != path {
				t.Fatalf("error names %q, not the file: %v", e.File, e)
			}
		}
		return
	}
	if len(tests) == 0 {
		t.Fatal("no tests and no error")
	}
	if len(tests) > maxExpandedTests+len(data) {
		t.Fatalf("%d tests from %d bytes", len(tests), len(data))
	}
	if len(n.list()) > len(data) {
		t.Fatalf("%d notes from %d bytes", len(n.list()), len(data))
	}
}

// loadJSONFile is loadJSON in checkLoad's shape.
func loadJSONFile(path string, data []byte, n *Notes) ([]Test, error) {
	return loadJSON(File{Path: path, Data: data, Notes: n})
}

func FuzzNativeTOML(f *testing.F) {
	fuzzSeeds(f, ".toml")
	f.Add([]byte("[[tests]]\nid = \"a\"\nuser = \"hi\"\nmode = \"agent\"\nmock_tools = { f = { _default = \"x\" } }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if nestingError("b", data, "toml") != nil {
			return // loadBattery refuses it before any decoder runs
		}
		checkLoad(t, data, loadNativeTOML)
	})
}

func FuzzJSON(f *testing.F) {
	fuzzSeeds(f, ".json")
	f.Add([]byte(`{"tests": [{"id": "a", "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}]}]}`))
	f.Add([]byte(`{"tests": ["a"], "models": ["m"], "results": [{"test_id": "a", "model_id": "m"}]}`))
	f.Add([]byte(`[{"question": [[{"role": "user", "content": "q"}]], "function": [{"name": "f", "parameters": {"type": "dict"}}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if nestingError("b", data, "json") != nil {
			return
		}
		checkLoad(t, data, loadJSONFile)
	})
}

// FuzzPromptPrix reads prompt-prix's {"prompts": [...]} through loadJSON,
// which hands it to edges/promptprix (edges_test.go links it).
func FuzzPromptPrix(f *testing.F) {
	fuzzSeeds(f, ".json")
	f.Add([]byte(`{"prompts": [{"id": "a", "user": "u", "mode": "react", "max_iterations": 3, "tools": [{"type": "function", "function": {"name": "f"}}], "mock_tools": {"f": {"_default": {"x": 1}}}, "expected": {"tool_name": "f", "params_types": {"a": {"b": "int"}}, "tool_calls": [{"tool_name": "f"}], "match_mode": "first_step"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if nestingError("b", data, "json") != nil {
			return
		}
		checkLoad(t, data, loadJSONFile)
	})
}

func FuzzJSONL(f *testing.F) {
	fuzzSeeds(f, ".jsonl")
	f.Add([]byte(bfclLines))
	f.Add([]byte(`{"input": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "target": ["a", "b"], "choices": ["x", "y"]}` + "\n"))
	f.Add([]byte(`{"id": "t1", "expected_verdict": "PASS"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if nestingError("b", data, "jsonl") != nil {
			return
		}
		checkLoad(t, data, loadJSONL)
	})
}

func FuzzPromptfoo(f *testing.F) {
	fuzzSeeds(f, ".yaml")
	f.Add([]byte(pfAssertions))
	f.Add([]byte(pfJudgeBattery))
	f.Add([]byte("prompts: [a, b, c]\ntests:\n  - vars: {x: [1, 2, 3], y: [4, 5]}\n    assert: [{type: contains-any, value: \"1, 2\"}]\n"))
	f.Add([]byte("a: &a [1, 2]\nb: &b [*a, *a]\nc: &c [*b, *b]\nprompts: [x]\ntests: [{vars: {v: *c}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLoad(t, data, loadYAML)
	})
}

// FuzzSniff: telling a format apart never fails on content, only says
// "not a battery".
func FuzzSniff(f *testing.F) {
	fuzzSeeds(f, ".json", ".jsonl", ".toml", ".yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ext := range []string{".json", ".jsonl", ".toml", ".yaml", ".txt"} {
			format, err := sniffFormat("b"+ext, data)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("%s: %T %v", ext, err, err)
				}
				continue
			}
			if format < formatTOML || format > formatOther {
				t.Fatalf("%s: format %d", ext, format)
			}
		}
	})
}

// maxExpandedTests is edges/promptfoo's bound on the tests one config
// expands into.
const maxExpandedTests = 20000

// loadYAML reads a .yaml battery with the format registered for it
// (edges/promptfoo, which edges_test.go links).
func loadYAML(path string, data []byte, n *Notes) ([]Test, error) {
	return loadForeign(File{Path: path, Data: data, Notes: n})
}
