package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// sharedBatteries is /work/shared/batteries seen from this package: the
// repo's sibling shared/ folder, which CI places beside the clone.
var sharedBatteries = filepath.Join("..", "..", "shared", "batteries")

func sharedBattery(t *testing.T, name string) string {
	t.Helper()
	if _, err := os.Stat(sharedBatteries); err != nil {
		t.Skipf("shared batteries folder %s is absent (it sits beside the repo); importer fixtures Under testdata still run", sharedBatteries)
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
	t.Parallel()
	file := sharedBattery(t, "tool_competence_tests.json")
	tests, warnings, err := loadBattery(file)
	if err != nil {
		t.Fatal(err)
	}
	if ids := testIDs(tests); !slices.Equal(ids, promptPrixIDs) {
		t.Fatalf("ids = %v", ids)
	}
	m := byID(tests)
	tc := func(name string, args map[string]any) check.Check {
		return check.Check{Type: "tool-call", Name: name, Args: args}
	}
	cases := []struct {
		id         string
		wantChecks []check.Check
	}{
		{"basic_tool_call", []check.Check{tc("get_weather", map[string]any{"city": "Tokyo"})}},
		// match_mode "contains": the path need only contain report.pdf.
		{"tool_selection", []check.Check{tc("delete_file", nil),
			{Type: "tool-args-contains", Name: "delete_file", Args: map[string]any{"path": "report.pdf"}}}},
		{"constraint_following", []check.Check{{Type: "not-tool-call", Name: "execute_code"},
			{Type: "tool-call-any", Args: map[string]any{"names": []any{"respond_to_user", "ask_human"}}}}},
		{"enum_constraint", []check.Check{tc("route_ticket", map[string]any{"department": "returns"}),
			{Type: "tool-args-enum", Name: "route_ticket", Args: map[string]any{"priority": []any{"low", "medium", "high"}}}}},
		{"nested_object", []check.Check{tc("create_event", nil),
			{Type: "tool-args-types", Name: "create_event", Args: map[string]any{"title": "string",
				"time": map[string]any{"start": "string", "duration_minutes": "integer"}}}}},
		{"multiple_required", []check.Check{tc("transfer", nil),
			{Type: "tool-args-required", Name: "transfer", Args: map[string]any{"params": []any{"from_account", "to_account", "amount"}}},
			{Type: "tool-args-types", Name: "transfer", Args: map[string]any{"amount": "number"}}}},
		{"no_tool_needed", []check.Check{{Type: "response-type", Value: "text"}, {Type: "contains", Value: "4"}, {Type: "no-tool-call"}}},
		{"boolean_optional", []check.Check{tc("query_users", map[string]any{"status": "active", "include_email": true}),
			{Type: "tool-args-pattern", Name: "query_users", Args: map[string]any{"created_after": "^2025-"}}}},
		{"type_coercion", []check.Check{tc("transfer", map[string]any{"amount": float64(500)}),
			{Type: "tool-args-types", Name: "transfer", Args: map[string]any{"amount": "number"}}}},
		{"loop_recovery", []check.Check{tc("route", nil),
			{Type: "not-tool-call", Name: "route", Args: map[string]any{"specialist": "code_executor"}},
			{Type: "tool-args-enum", Name: "route", Args: map[string]any{"specialist": []any{"data_analyst", "researcher", "chat"}}}}},
		{"parallel_tool_calls", []check.Check{{Type: "tool-call-count", Value: "2"},
			tc("get_weather", map[string]any{"city": "Tokyo"}), tc("get_weather", map[string]any{"city": "Paris"})}},
		// match_mode "first_step": the first call of the reply.
		{"chained_dependency", []check.Check{{Type: "first-tool-call", Name: "read_file", Args: map[string]any{"path": "config.json"}}}},
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
	if b.ToolChoice != "required" || b.System == "" || b.User != "What's the weather in Tokyo?" || b.Category != "basic_invocation" || b.Severity != "critical" {
		t.Errorf("test = %+v", b)
	}
	if m["nested_object"].Severity != "warning" {
		t.Errorf("severity = %q", m["nested_object"].Severity)
	}
	if want := fmt.Sprintf("%s:%d", file, lineOf(t, file, `"id": "basic_tool_call"`, 1)-1); b.Source != want {
		t.Errorf("Source = %s, want %s", b.Source, want)
	}
	// Nothing is dropped without a word: the one key that is no check is noted.
	if len(warnings) != 1 || !strings.Contains(warnings[0], `expected key "notes"`) || !strings.Contains(warnings[0], "chained_dependency") {
		t.Errorf("warnings = %q", warnings)
	}
}

// The shared battery's expected blocks, run as checks against replies a
// good and a bad model give: each test passes the one and fails the other.
func TestPromptPrixExpectedChecksDecide(t *testing.T) {
	t.Parallel()
	tests, err := LoadBattery(sharedBattery(t, "tool_competence_tests.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := byID(tests)
	call := func(name, args string) chat.ToolCall { return chat.ToolCall{Name: name, Arguments: args} }
	calls := func(cs ...chat.ToolCall) check.Output { return check.Output{ToolCalls: cs} }
	cases := []struct {
		id        string
		good, bad check.Output
	}{
		{"basic_tool_call", calls(call("get_weather", `{"city":"Tokyo"}`)), calls(call("get_weather", `{"city":"Osaka"}`))},
		{"tool_selection", calls(call("delete_file", `{"path":"/tmp/report.pdf"}`)), calls(call("delete_file", `{"path":"notes.txt"}`))},
		{"constraint_following", calls(call("ask_human", `{"question":"?"}`)), calls(call("execute_code", `{"code":"print(1)"}`))},
		{"enum_constraint", calls(call("route_ticket", `{"department":"returns","priority":"high"}`)),
			calls(call("route_ticket", `{"department":"returns","priority":"urgent"}`))},
		{"nested_object", calls(call("create_event", `{"title":"Q4","time":{"start":"15:00","duration_minutes":60}}`)),
			calls(call("create_event", `{"title":"Q4","start":"15:00","duration_minutes":60}`))},
		{"multiple_required", calls(call("transfer", `{"from_account":"checking","to_account":"savings","amount":500}`)),
			calls(call("transfer", `{"from_account":"checking","amount":"500"}`))},
		{"no_tool_needed", check.Output{Content: "2 + 2 = 4"}, calls(call("read_file", `{"path":"math.txt"}`))},
		{"boolean_optional", calls(call("query_users", `{"status":"active","include_email":true,"created_after":"2025-01-01"}`)),
			calls(call("query_users", `{"status":"active","include_email":true,"created_after":"2024-01-01"}`))},
		{"loop_recovery", calls(call("route", `{"specialist":"researcher","reasoning":"blocked"}`)),
			calls(call("route", `{"specialist":"code_executor","reasoning":"x"}`))},
		{"type_coercion", calls(call("transfer", `{"to_account":"savings","amount":500}`)),
			calls(call("transfer", `{"to_account":"savings","amount":"500"}`))},
		{"parallel_tool_calls", calls(call("get_weather", `{"city":"Tokyo"}`), call("get_weather", `{"city":"Paris"}`)),
			calls(call("get_weather", `{"city":"Tokyo"}`))},
		{"chained_dependency", calls(call("read_file", `{"path":"config.json"}`), call("respond_to_user", `{"message":"?"}`)),
			calls(call("respond_to_user", `{"message":"port 80"}`), call("read_file", `{"path":"config.json"}`))},
	}
	for _, tt := range cases {
		t.Run(tt.id, func(t *testing.T) {
			checks := m[tt.id].Checks
			if res := check.RunChecks(checks, tt.good); !check.Passed(res) {
				t.Errorf("the good reply fails: %+v", res)
			}
			if res := check.RunChecks(checks, tt.bad); check.Passed(res) {
				t.Errorf("the bad reply passes: %+v", res)
			}
		})
	}
}

func TestImportPromptfooYAMLFromPromptPrix(t *testing.T) {
	t.Parallel()
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
	if b.Criteria != "Calls get_weather with city=Tokyo" || b.Name != "Basic Tool Call (Sanity Check)" || b.Category != "basic_invocation" || b.Severity != "critical" {
		t.Errorf("test = %+v", b)
	}
	if len(b.Tools) != 1 || b.Tools[0].Function.Name != "get_weather" || b.ToolChoice != "required" {
		t.Errorf("tools %+v choice %v", b.Tools, b.ToolChoice)
	}
	if want := fmt.Sprintf("%s:%d", file, lineOf(t, file, `- description: "Basic Tool Call`, 1)); b.Source != want {
		t.Errorf("Source = %s, want %s", b.Source, want)
	}
	counts := map[string]int{}
	for _, tt := range tests {
		for _, c := range tt.Checks {
			counts[c.Type]++
		}
	}
	if want := map[string]int{"javascript": 15, "valid-tool-calls": 8, "contains": 2}; !reflect.DeepEqual(counts, want) {
		t.Errorf("check types = %v, want %v", counts, want)
	}
	// Only what pitwall does differently is noted: it runs its own models,
	// and it offers the tools prompt-prix's battery puts in options.provider
	// (promptfoo's grader), which promptfoo does not send, with tool_choice
	// validated and not sent, as prompt-prix does.
	if len(warnings) != 2 || !strings.Contains(warnings[0], "providers are not run") || !strings.Contains(warnings[1], "prompt-prix's battery") ||
		!strings.Contains(warnings[1], "promptfoo sends none of them") {
		t.Errorf("warnings = %q", warnings)
	}
	if b.Dialect != DialectPromptPrix || b.SendsToolChoice(Run{}) {
		t.Errorf("dialect %q: tool_choice would be sent, where prompt-prix validates it only", b.Dialect)
	}
	// The scripts run as promptfoo 0.123.1 runs them (e2e/promptfoo holds
	// pitwall to it): a reply that only calls tools reaches a javascript
	// assertion as the array of calls itself, not as JSON text, so this
	// battery's JSON.parse(output) throws on it in promptfoo and in pitwall
	// alike, and the script's verdict is a failure either way.
	weather := check.Output{ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}}
	res := check.RunChecks(b.Checks, weather)
	for _, r := range res {
		switch {
		case r.Name == "valid-tool-calls" && !r.Pass:
			t.Errorf("a good reply's tool calls fail: %+v", r)
		case strings.HasPrefix(r.Name, "javascript") && (r.Pass || !strings.Contains(r.Reason, "SyntaxError")):
			t.Errorf("JSON.parse of the calls array should throw as in promptfoo: %+v", r)
		}
	}
	none := m["tool_choice_none"]
	if res := check.RunChecks(none.Checks, check.Output{Content: "15 * 7 = 105"}); !check.Passed(res) {
		t.Errorf("a text answer fails the text-only test: %+v", res)
	}
	// Its script catches what JSON.parse throws and passes, as in promptfoo;
	// the test still fails such a reply on its other assertions.
	script := none.Checks[1:]
	if res := check.RunChecks(script, check.Output{ToolCalls: []chat.ToolCall{{Name: "calculate", Arguments: `{"expression":"15*7"}`}}}); !check.Passed(res) {
		t.Errorf("the text-only script should pass what JSON.parse cannot read: %+v", res)
	}
	if res := check.RunChecks(none.Checks, check.Output{ToolCalls: []chat.ToolCall{{Name: "calculate", Arguments: `{"expression":"15*7"}`}}}); check.Passed(res) {
		t.Errorf("a reply that only calls the tool passes the text-only test: %+v", res)
	}
}

func TestImportPromptfooMapsPromptsTimesTestsAndAssertions(t *testing.T) {
	t.Parallel()
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
	types := func(cs []check.Check) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Type)
		}
		return out
	}
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
		{"checks", m["capital-of-france/p1"].Checks[:4], []check.Check{
			latency,
			{Type: "icontains", Value: "paris", Args: map[string]any{"output": "promptfoo"}},
			{Type: "not-contains", Value: "What is the capital of France?", Args: map[string]any{"output": "promptfoo"}},
			{Type: "contains-any", Args: map[string]any{"output": "promptfoo", "values": []any{"Paris", "paris."}}},
		}},
		{"javascript is a check", types(m["capital-of-france/p1"].Checks), []string{"max-latency", "icontains", "not-contains", "contains-any", "javascript"}},
		{"script source", m["capital-of-france/p1"].Checks[4].Value, "output.length < 100"},
		{"schema, all-of and defaults", m["json-city/p1"].Checks, []check.Check{
			latency,
			{Type: "json-schema", Args: map[string]any{"output": "promptfoo"}, Schema: map[string]any{"type": "object", "required": []any{"city"}}},
			{Type: "contains-all", Args: map[string]any{"output": "promptfoo", "values": []any{"city", "Paris"}}},
		}},
		{"factuality becomes the reference", m["json-city/p1"].Reference, "The capital of France is Paris"},
		// options.provider is promptfoo's grader: promptfoo sends none of
		// its config to the model (e2e/promptfoo checks it on the wire).
		{"options.provider's response_format is not sent", m["json-city/p1"].ResponseFormat, (*chat.ResponseFormat)(nil)},
		{"python noted once per prompt, with a count; the grader's config once", warnings, []string{
			file + `: 2× "python" assertion not checked: pitwall runs JavaScript assertions only (in capital-of-france/p1, capital-of-france/chat)`,
			file + `: 1× options.provider configures promptfoo's grader: its tools, tool_choice and response_format are not sent to the model, as promptfoo does not send them (in json-city)`}},
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
	t.Parallel()
	file := filepath.Join("testdata", "batteries", "promptfoo_file_tests.yaml")
	_, err := LoadBattery(file)
	wantErr(t, err, file, lineOf(t, file, "tests:", 1), "tests", "written in this file")
}

func TestImportJSONLPromptPrixAndInspect(t *testing.T) {
	t.Parallel()
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
