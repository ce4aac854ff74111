package bfcl

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"pitwall/config"
)

func TestBFCLParameterTypesBecomeJSONSchemaTypes(t *testing.T) {
	in := map[string]any{"type": "dict", "properties": map[string]any{
		"height": map[string]any{"type": "float"},
		"dims":   map[string]any{"type": "tuple", "items": map[string]any{"type": "any"}},
		"name":   map[string]any{"type": "string"},
	}}
	want := map[string]any{"type": "object", "properties": map[string]any{
		"height": map[string]any{"type": "number"},
		"dims":   map[string]any{"type": "array", "items": map[string]any{}},
		"name":   map[string]any{"type": "string"},
	}}
	if got := bfclSchema(in); !reflect.DeepEqual(got, want) {
		t.Errorf("bfclSchema = %v, want %v", got, want)
	}
	if in["type"] != "dict" {
		t.Error("bfclSchema changed the schema it was given")
	}
}

// A JSONL file of entries reaches this package through config, which
// frames the lines: registering is all it takes.
func TestEntriesLoadThroughConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "simple.jsonl")
	line := `{"id": "simple_12", "question": [[{"role": "user", "content": "Area of a circle of radius 2?"}]], "function": {"name": "area", "parameters": {"type": "dict", "properties": {"r": {"type": "float"}}}}, "ground_truth": [{"area": {"r": [2, 2.0], "unit": ["m", ""]}}]}` + "\n"
	if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := config.LoadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 1 {
		t.Fatalf("got %d tests, want 1", len(tests))
	}
	e := tests[0]
	if e.ID != "simple_12" || e.Category != "simple" || e.User != "Area of a circle of radius 2?" {
		t.Errorf("entry = %+v", e)
	}
	if len(e.Tools) != 1 || e.Tools[0].Function.Name != "area" {
		t.Fatalf("tools = %+v", e.Tools)
	}
	var types []string
	for _, c := range e.Checks {
		types = append(types, c.Type)
	}
	// unit lists "" among its values: optional, so not held to them.
	if want := []string{"tool-call-count", "tool-call", "tool-args-enum"}; !reflect.DeepEqual(types, want) {
		t.Errorf("checks = %v, want %v", types, want)
	}
	if args := e.Checks[2].Args; len(args) != 1 || args["r"] == nil {
		t.Errorf("tool-args-enum args = %v, want r alone", args)
	}
}
