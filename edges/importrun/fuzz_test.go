package importrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Seeds: one file of each kind, and shapes near their edges.
var parseSeeds = []string{
	`{"tests":["a"],"models":["0: m"],"results":[{"test_id":"a","model_id":"0: m","status":"completed","response":"**Tool Call:** ` + "`f`" + `\n` + "```json\n{}\n```" + `","latency_ms":1}]}`,
	`{"tests":["a"],"models":["m"],"runs_total":2,"aggregates":[{"test_id":"a","model_id":"m","results":[{"status":"error","error":"x"},{"status":"pending"}]}]}`,
	`{"evalId":"e","results":{"version":3,"results":[{"provider":{"id":"p"},"testIdx":0,"promptIdx":1,"response":{"output":[{"function":{"name":"f","arguments":"{}"}}]}}]}}`,
	`{"version":2,"results":[{"provider":"p","testIdx":1,"promptIdx":0,"response":{"output":"x"}}],"table":{}}`,
	`{"eval":{"model":"m"},"samples":[{"id":1,"epoch":2,"output":{"choices":[{"message":{"content":[{"type":"text","text":"x"}],"tool_calls":[{"function":"f","arguments":{}}]}}]}}]}`,
	`{"eval":{"model":"m"},"samples":[{"id":"s","epoch":1,"error":{"message":"boom"}}],"status":"error"}`,
	`{"tests":[1,2],"models":["m"],"results":[]}`,
	`{"aggregates":[],"runs_total":-1}`,
	`[1,2,3]`,
	`{"prompts":[]}`,
	"PK\x03\x04",
	``,
}

// FuzzImportParse: no input makes a reader panic, and what one returns holds
// together: every result names a model and a test of the run and a repeat
// within it, and the run is within the limits.
func FuzzImportParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "interface {}") {
				t.Errorf("error speaks Go: %v", err)
			}
			return
		}
		if err := checkShape(len(src.Models), len(src.Tests), src.Repeat); err != nil || src.Repeat < 1 {
			t.Fatalf("accepted a run of %d models × %d tests × %d repeats: %v", len(src.Models), len(src.Tests), src.Repeat, err)
		}
		if src.Refs != nil && len(src.Refs) != len(src.Tests) {
			t.Fatalf("%d refs for %d tests", len(src.Refs), len(src.Tests))
		}
		if len(src.Results) > len(data) {
			t.Fatalf("%d results from %d bytes", len(src.Results), len(data))
		}
		for _, r := range src.Results {
			if !slices.Contains(src.Models, r.Model) || !slices.Contains(src.Tests, r.Test) || r.Repeat < 0 || r.Repeat >= src.Repeat {
				t.Fatalf("result %+v outside the run (models %q, %d tests, repeat %d)", r, src.Models, len(src.Tests), src.Repeat)
			}
			if r.Latency < 0 {
				t.Fatalf("negative latency %s", r.Latency)
			}
		}
	})
}

// FuzzImportToolCallsInText: no reply makes the reader panic; a reply with no
// call comes back as it was; every call has a name of a sane length.
func FuzzImportToolCallsInText(f *testing.F) {
	for _, s := range []string{
		"plain", renderPP(call("Tokyo"), call("Rome")), renderFragments(call("Oslo")), renderLFM("a", "b"), renderHermes("x"),
		"**Tool Call:** `", "**tool call:** `f`\n```", "<|tool_call_start|>[f(a=[{", "<tool_call>{\"name\":1}</tool_call>",
		"<function_call>[{\"function\":{\"name\":\"f\"}}]", "İ**TOOL CALL:**`f`",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, calls := ToolCallsInText(s)
		if len(calls) == 0 && text != s {
			t.Fatalf("no calls, but the text changed: %q → %q", s, text)
		}
		if len(text) > len(s) {
			t.Fatalf("the text grew: %q → %q", s, text)
		}
		for _, c := range calls {
			if c.Name == "" || len(c.Name) > maxNameBytes {
				t.Fatalf("call with name %q", c.Name)
			}
		}
	})
}

// FuzzImportPyCalls: what parses is JSON, whatever the model wrote.
func FuzzImportPyCalls(f *testing.F) {
	for _, s := range []string{
		`[f(a=1)]`, `f(a="x", b='y\'z', c=[1, 2.5e3, None], d={"k": (True, False)}, e=-0.5)`, `[a(), b(x={1: 2})]`,
		`f(a="\u00e9\x41\U0001F600")`, `f(a=1_000)`, `f(a=` + strings.Repeat("[", 70), `f(a="\xff")`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := parsePyCalls(s)
		if err != nil {
			return
		}
		for _, c := range calls {
			if !json.Valid([]byte(c.Arguments)) {
				t.Fatalf("%q parsed to arguments that are not JSON: %q", s, c.Arguments)
			}
			if !utf8.ValidString(c.Arguments) {
				t.Fatalf("arguments not UTF-8: %q", c.Arguments)
			}
		}
	})
}

func TestImportLimitsRefuseBeforeAllocating(t *testing.T) {
	tests := []struct {
		name                   string
		models, tests, repeats int
		want                   string
	}{
		{"models", MaxModels + 1, 1, 1, "1001 models"},
		{"tests", 1, MaxTests + 1, 1, "100001 tests"},
		{"repeats", 1, 1, MaxRepeat + 1, "1001 runs per cell"},
		{"cells", 1000, 1001, 1, "cells"},
		{"cells with repeats", 100, 100, 101, "cells"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkShape(tt.models, tt.tests, tt.repeats)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if err := checkShape(MaxModels, MaxCells/MaxModels, 1); err != nil {
		t.Errorf("the largest run allowed is refused: %v", err)
	}
	// A short file that lists 1000 models and 1001 tests asks for a million
	// cells: refused, though the lists fit in 20 KB.
	models, ids := make([]string, 1000), make([]string, 1001)
	for i := range models {
		models[i] = "m" + strconv.Itoa(i)
	}
	for i := range ids {
		ids[i] = "t" + strconv.Itoa(i)
	}
	b, _ := json.Marshal(map[string]any{"tests": ids, "models": models, "results": []any{}})
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "cells") {
		t.Errorf("Parse of %d bytes asking for 1,001,000 cells: %v", len(b), err)
	}
}

func TestImportReadFileRefusesPastTheLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil { // sparse: no disk written
		t.Fatal(err)
	}
	f.Close()
	if _, err := Import(nil, p, Options{}); err == nil || !strings.Contains(err.Error(), "more than the 64 MiB") {
		t.Errorf("err = %v", err)
	}
	if _, err := Import(nil, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a folder: err = %v", err)
	}
}
