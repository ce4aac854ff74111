package config

import (
	"fmt"
	"os"
	"path/filepath"
	"pitwall/judge/check"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sharedBatteries is /work/shared/batteries seen from this package: the
// repo's sibling shared/ folder, which CI places beside the clone.
var sharedBatteries = filepath.Join("..", "..", "shared", "batteries")

func sharedBattery(t *testing.T, name string) string {
	t.Helper()
	if _, err := os.Stat(sharedBatteries); err != nil {
		t.Skipf("shared batteries folder %s is absent (it sits beside the repo); importer fixtures under testdata still run", sharedBatteries)
	}
	return filepath.Join(sharedBatteries, "prompt-prix", name)
}

var promptPrixIDs = []string{
	"basic_tool_call", "tool_selection", "constraint_following", "enum_constraint", "nested_object",
	"multiple_required", "no_tool_needed", "tool_choice_none", "ambiguous_routing", "boolean_optional",
	"loop_recovery", "missing_required_info", "type_coercion", "parallel_tool_calls", "chained_dependency",
}

func byID(tests []Test) map[string]Test {
	m := map[string]Test{}
	for _, t := range tests {
		m[t.ID] = t
	}
	return m
}

func TestImportPromptPrixJSON(t *testing.T) {
	file := sharedBattery(t, "tool_competence_tests.json")
	tests, err := LoadBattery(file)
	if err != nil {
		t.Fatal(err)
	}
	if ids := testIDs(tests); !slices.Equal(ids, promptPrixIDs) {
		t.Fatalf("ids = %v", ids)
	}
	m := byID(tests)
	cases := []struct {
		id         string
		wantChecks []check.Check
	}{
		{"basic_tool_call", []check.Check{{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Tokyo"}}}},
		// match_mode "contains": the path need only contain report.pdf, which args cannot say.
		{"tool_selection", []check.Check{{Type: "tool-call", Name: "delete_file"}}},
		{"constraint_following", []check.Check{{Type: "not-tool-call", Name: "execute_code"}}},
		{"no_tool_needed", []check.Check{{Type: "contains", Value: "4"}, {Type: "no-tool-call"}}},
		{"type_coercion", []check.Check{{Type: "tool-call", Name: "transfer", Args: map[string]any{"amount": float64(500)}}}},
		{"loop_recovery", []check.Check{{Type: "tool-call", Name: "route"},
			{Type: "not-tool-call", Name: "route", Args: map[string]any{"specialist": "code_executor"}}}},
		{"parallel_tool_calls", []check.Check{
			{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Tokyo"}},
			{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Paris"}}}},
	}
	for _, tt := range cases {
		t.Run(tt.id, func(t *testing.T) {
			if got := m[tt.id].Checks; !reflect.DeepEqual(got, tt.wantChecks) {
				t.Errorf("checks = %#v\nwant %#v", got, tt.wantChecks)
			}
		})
	}
	b := m["basic_tool_call"]
	if b.Criteria != "Pass if: Calls get_weather with city=Tokyo\nFail if: No tool call or wrong city" {
		t.Errorf("criteria = %q", b.Criteria)
	}
	if !strings.Contains(b.Reference, `"tool_name":"get_weather"`) {
		t.Errorf("reference = %q, want the expected block", b.Reference)
	}
	if b.ToolChoice != "required" || b.System == "" || b.User != "What's the weather in Tokyo?" || b.Category != "basic_invocation" {
		t.Errorf("test = %+v", b)
	}
	if want := fmt.Sprintf("%s:%d", file, lineOf(t, file, `"id": "basic_tool_call"`, 1)-1); b.Source != want {
		t.Errorf("Source = %s, want %s", b.Source, want)
	}
}

func TestImportPromptfooYAMLFromPromptPrix(t *testing.T) {
	file := sharedBattery(t, "tool_competence_tests.promptfoo.yaml")
	tests, warnings, err := loadBattery(file)
	if err != nil {
		t.Fatal(err)
	}
	if ids := testIDs(tests); !slices.Equal(ids, promptPrixIDs) {
		t.Fatalf("ids = %v", ids)
	}
	m := byID(tests)
	b := m["basic_tool_call"]
	if b.User != "You have one tool: get_weather(city: string). Use it to answer the user.\n\nUser: What's the weather in Tokyo?" {
		t.Errorf("rendered prompt = %q", b.User)
	}
	if b.Criteria != "Calls get_weather with city=Tokyo" || b.Name != "Basic Tool Call (Sanity Check)" || b.Category != "basic_invocation" {
		t.Errorf("test = %+v", b)
	}
	if len(b.Tools) != 1 || b.Tools[0].Function.Name != "get_weather" || b.ToolChoice != "required" {
		t.Errorf("tools %+v choice %v", b.Tools, b.ToolChoice)
	}
	if want := fmt.Sprintf("%s:%d", file, lineOf(t, file, `- description: "Basic Tool Call`, 1)); b.Source != want {
		t.Errorf("Source = %s, want %s", b.Source, want)
	}
	if got := m["tool_choice_none"].Checks; !reflect.DeepEqual(got, []check.Check{{Type: "contains", Value: "105"}}) {
		t.Errorf("contains assertion: %#v", got)
	}
	joined := strings.Join(warnings, "\n")
	for _, typ := range []string{`15 "javascript"`, `"is-valid-openai-tools-call"`} {
		if !strings.Contains(joined, typ) {
			t.Errorf("warnings lack %s:\n%s", typ, joined)
		}
	}
}

func TestImportPromptfooMapsPromptsTimesTestsAndAssertions(t *testing.T) {
	file := filepath.Join("testdata", "batteries", "promptfoo.yaml")
	tests, warnings, err := loadBattery(file)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{"capital-of-france/p1", "capital-of-france/chat", "json-city/p1", "json-city/chat"}
	if ids := testIDs(tests); !slices.Equal(ids, wantIDs) {
		t.Fatalf("ids = %v, want %v", ids, wantIDs)
	}
	m := byID(tests)
	latency := check.Check{Type: "max-latency", Value: "5000ms"}
	tests2 := []struct {
		name string
		got  any
		want any
	}{
		{"string prompt rendered", m["capital-of-france/p1"].User, "Answer briefly: What is the capital of France?"},
		{"chat prompt becomes messages", len(m["capital-of-france/chat"].Messages), 2},
		{"chat prompt rendered", m["capital-of-france/chat"].Messages[1].Content, "What is the capital of France?"},
		{"category from vars", m["capital-of-france/p1"].Category, "facts"},
		{"rubric becomes criteria", m["capital-of-france/p1"].Criteria, "Names Paris as the capital"},
		{"checks", m["capital-of-france/p1"].Checks, []check.Check{
			latency,
			{Type: "icontains", Value: "paris"},
			{Type: "not-contains", Value: "What is the capital of France?"},
			{Type: "regex", Value: `(?:Paris|paris\.)`},
		}},
		{"schema, all-of and defaults", m["json-city/p1"].Checks, []check.Check{
			latency,
			{Type: "json-schema", Schema: map[string]any{"type": "object", "required": []any{"city"}}},
			{Type: "contains", Value: "city"},
			{Type: "contains", Value: "Paris"},
		}},
		{"factuality becomes the reference", m["json-city/p1"].Reference, "The capital of France is Paris"},
		{"response_format from the provider config", m["json-city/p1"].ResponseFormat.Type, "json_object"},
		{"javascript skipped with a warning", len(warnings), 1},
	}
	for _, tt := range tests2 {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v\nwant %#v", tt.got, tt.want)
			}
		})
	}
}

func TestPromptfooTestsFromAFileAreRefused(t *testing.T) {
	file := filepath.Join("testdata", "batteries", "promptfoo_file_tests.yaml")
	_, err := LoadBattery(file)
	wantErr(t, err, file, lineOf(t, file, "tests:", 1), "tests", "written in this file")
}

func TestImportJSONLPromptPrixAndInspect(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		check func(t *testing.T, tests []Test)
	}{
		{"prompt-prix lines", filepath.Join("testdata", "batteries", "prompts.jsonl"), func(t *testing.T, tests []Test) {
			if ids := testIDs(tests); !slices.Equal(ids, []string{"weather", "math"}) {
				t.Fatalf("ids = %v", ids)
			}
			want := []check.Check{{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Tokyo"}}}
			if !reflect.DeepEqual(tests[0].Checks, want) {
				t.Errorf("checks = %#v", tests[0].Checks)
			}
			if !reflect.DeepEqual(tests[1].Checks, []check.Check{{Type: "contains", Value: "4"}, {Type: "no-tool-call"}}) {
				t.Errorf("checks = %#v", tests[1].Checks)
			}
			// The blank line counts: math is on line 3.
			if !strings.HasSuffix(tests[1].Source, "prompts.jsonl:3") {
				t.Errorf("Source = %s", tests[1].Source)
			}
		}},
		{"inspect samples", filepath.Join("testdata", "batteries", "inspect.jsonl"), func(t *testing.T, tests []Test) {
			if ids := testIDs(tests); !slices.Equal(ids, []string{"inspect-1", "7", "mc-1"}) {
				t.Fatalf("ids = %v", ids)
			}
			if tests[0].User != "What is the capital of France?" || tests[0].Reference != "Paris" {
				t.Errorf("string input: %+v", tests[0])
			}
			if len(tests[1].Messages) != 2 || tests[1].Messages[1].Content != "Largest planet?" || tests[1].Category != "astronomy" {
				t.Errorf("message input: %+v", tests[1])
			}
			if tests[1].Reference != "Any of these is correct:\nJupiter\njupiter" {
				t.Errorf("list target: %q", tests[1].Reference)
			}
			if tests[2].User != "Which is a fruit?\n\nA) Carrot\nB) Apple" || tests[2].Reference != "B" {
				t.Errorf("choices: %q %q", tests[2].User, tests[2].Reference)
			}
			if tests[2].Source != filepath.Join("testdata", "batteries", "inspect.jsonl")+":3" {
				t.Errorf("Source = %s", tests[2].Source)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadBattery(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}
