package bfcl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// prompt-prix's BFCL-style JSONL loads (it was refused with 14 errors, one
// per {"name", "arguments"} call): "*" is any value, a list the values
// allowed, and its keys beside the ground truth are checks too.
func TestPromptPrixBFCLLoads(t *testing.T) {
	tests, err := config.LoadBattery(filepath.Join("testdata", "tool_competence_tests_bfcl.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 15 {
		t.Fatalf("%d tests, want 15", len(tests))
	}
	byID := map[string]config.Test{}
	for _, tt := range tests {
		byID[strings.TrimPrefix(tt.ID, "tool_competence_v1_")] = tt
		if tt.Dialect != config.DialectPromptPrix {
			t.Errorf("%s: dialect %q, want prompt-prix's", tt.ID, tt.Dialect)
		}
	}
	kinds := func(id string) string {
		var s []string
		for _, c := range byID[id].Checks {
			k := c.Type
			if c.Name != "" {
				k += " " + c.Name
			}
			if len(c.Args) > 0 {
				b, _ := json.Marshal(c.Args)
				k += " " + string(b)
			}
			s = append(s, k)
		}
		return strings.Join(s, " | ")
	}
	for id, want := range map[string]string{
		"basic_tool_call":       `tool-call-count | tool-call get_weather {"city":"Tokyo"}`,
		"constraint_following":  `tool-call-count | tool-call respond_to_user | tool-args-required respond_to_user {"params":["message"]} | not-tool-call execute_code`,
		"loop_recovery":         `tool-call-count | tool-call route | tool-args-required route {"params":["reasoning"]} | tool-args-enum route {"specialist":["data_analyst","researcher","chat"]} | not-tool-call route {"specialist":"code_executor"}`,
		"nested_object":         `tool-call-count | tool-call create_event {"time":{"duration_minutes":60}} | tool-args-required create_event {"params":["time","title"]}`,
		"type_coercion":         `tool-call-count | tool-call transfer {"amount":500,"to_account":"savings"} | tool-args-types {"amount":"number"}`,
		"no_tool_needed":        `no-tool-call | contains`,
		"parallel_tool_calls":   `tool-call-count | tool-call get_weather {"city":"Tokyo"} | tool-call get_weather {"city":"Paris"}`,
		"chained_dependency":    `first-tool-call read_file {"path":"config.json"}`,
		"missing_required_info": `tool-call-count | tool-call ask_clarification | tool-args-required ask_clarification {"params":["question"]}`,
	} {
		if got := kinds(id); got != want {
			t.Errorf("%s: checks\n %s\nwant\n %s", id, got, want)
		}
	}
	if tc := byID["tool_choice_none"].ToolChoice; tc != "none" {
		t.Errorf("tool_choice_none's tool_choice %v: kept to validate the reply", tc)
	}
	if byID["tool_choice_none"].SendsToolChoice(config.Run{}) {
		t.Error("a prompt-prix test's tool_choice is sent; prompt-prix never sends it")
	}
	if s := byID["parallel_tool_calls"].Severity; s != "warning" {
		t.Errorf("severity %q", s)
	}
}
