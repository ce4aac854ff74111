package check

import (
	"errors"
	"strings"
	"testing"

	"pitwall/gpu/chat"
)

func TestListAndShapeChecksDecide(t *testing.T) {
	route := []chat.ToolCall{{Name: "route", Arguments: `{"specialist": "researcher", "task_summary": "EV stats"}`}}
	tests := []struct {
		name   string
		check  Check
		out    Output
		pass   bool
		reason string
	}{
		{"contains-any one found", Check{Type: "contains-any", Args: map[string]any{"values": []any{"Rome", "Paris"}}}, Output{Content: "It is Paris."}, true, ""},
		{"contains-any none", Check{Type: "contains-any", Args: map[string]any{"values": []any{"Rome", "Oslo"}}}, Output{Content: "It is Paris."}, false, "none found"},
		{"contains-any numbers as text", Check{Type: "contains-any", Args: map[string]any{"values": []any{float64(4)}}}, Output{Content: "2+2=4"}, true, ""},
		{"icontains-any", Check{Type: "icontains-any", Args: map[string]any{"values": []any{"PARIS"}}}, Output{Content: "paris"}, true, ""},
		{"contains-all", Check{Type: "contains-all", Args: map[string]any{"values": []any{"city", "Paris"}}}, Output{Content: `{"city": "Paris"}`}, true, ""},
		{"contains-all one missing", Check{Type: "contains-all", Args: map[string]any{"values": []any{"city", "Rome"}}}, Output{Content: `{"city": "Paris"}`}, false, `missing "Rome"`},
		{"not-contains-all passes when one is missing", Check{Type: "not-contains-all", Args: map[string]any{"values": []any{"city", "Rome"}}}, Output{Content: `{"city": "Paris"}`}, true, ""},
		{"icontains-all", Check{Type: "icontains-all", Args: map[string]any{"values": []any{"CITY", "paris"}}}, Output{Content: `{"City": "Paris"}`}, true, ""},
		{"contains-json in prose", Check{Type: "contains-json"}, Output{Content: `Here you go: {"a": [1, 2]} enjoy`}, true, ""},
		{"contains-json none", Check{Type: "contains-json"}, Output{Content: "a {broken json"}, false, "no JSON object or array"},
		{"contains-json with a schema", Check{Type: "contains-json", Schema: ageSchema}, Output{Content: `x {"age": "old"} y {"age": 3}`}, true, ""},
		{"contains-json schema not met", Check{Type: "contains-json", Schema: ageSchema}, Output{Content: `x {"age": "old"}`}, false, "$.age: want integer"},
		{"levenshtein within", Check{Type: "levenshtein", Value: "Paris, France"}, Output{Content: "Paris France"}, true, ""},
		{"levenshtein too far", Check{Type: "levenshtein", Value: "Paris", Args: map[string]any{"threshold": float64(1)}}, Output{Content: "Parsi!"}, false, "more than 1 edits"},
		{"levenshtein long reply is cheap to refuse", Check{Type: "levenshtein", Value: "x"}, Output{Content: strings.Repeat("y", 1<<20)}, false, "more than 5 edits"},
		{"verdict from JSON", Check{Type: "verdict", Value: "fail"}, Output{Content: `{"verdict": "FAIL", "reason": "off topic"}`}, true, ""},
		{"verdict line", Check{Type: "verdict", Value: "PASS"}, Output{Content: "Reasoning...\nVERDICT: FAIL\nVERDICT: PASS"}, true, ""},
		{"verdict mismatch", Check{Type: "verdict", Value: "PASS"}, Output{Content: `{"verdict": "PARTIAL"}`}, false, "verdict PARTIAL, want PASS"},
		{"verdict absent", Check{Type: "verdict", Value: "PASS"}, Output{Content: "Looks fine."}, false, "no verdict"},
		{"response-type text", Check{Type: "response-type", Value: "text"}, Output{Content: "4"}, true, ""},
		{"response-type text with a call", Check{Type: "response-type", Value: "text"}, Output{Content: "4", ToolCalls: route}, false, "called route"},
		{"response-type tool_call", Check{Type: "response-type", Value: "tool_call"}, Output{ToolCalls: route}, true, ""},
		{"response-type json", Check{Type: "response-type", Value: "json"}, Output{Content: "nope"}, false, "not JSON"},
	}
	runDecides(t, tests)
}

func TestToolArgumentChecksDecide(t *testing.T) {
	ticket := []chat.ToolCall{{Name: "route_ticket", Arguments: `{"department": "returns", "priority": "high"}`}}
	event := []chat.ToolCall{{Name: "create_event", Arguments: `{"title": "Q4", "time": {"start": "15:00", "duration_minutes": 60}}`}}
	flat := []chat.ToolCall{{Name: "create_event", Arguments: `{"title": "Q4", "start": "15:00"}`}}
	transfer := []chat.ToolCall{{Name: "transfer", Arguments: `{"from_account": "checking", "to_account": "savings", "amount": "500"}`}}
	two := []chat.ToolCall{{Name: "get_weather", Arguments: `{"city": "Tokyo"}`}, {Name: "get_weather", Arguments: `{"city": "Paris"}`}}
	reading := []chat.ToolCall{{Name: "read_file", Arguments: `{"path": "./config.json"}`}, {Name: "respond_to_user", Arguments: `{"message": "?"}`}}
	tools := map[string]any{
		"get_weather": map[string]any{"type": "object", "required": []any{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		"now":         nil,
	}
	tests := []struct {
		name   string
		check  Check
		out    Output
		pass   bool
		reason string
	}{
		{"tool-call-any", Check{Type: "tool-call-any", Args: map[string]any{"names": []any{"ask_human", "respond_to_user"}}}, Output{ToolCalls: reading}, true, ""},
		{"tool-call-any none of them", Check{Type: "tool-call-any", Args: map[string]any{"names": []any{"ask_human"}}}, Output{ToolCalls: ticket}, false, "called route_ticket"},
		{"first-tool-call", Check{Type: "first-tool-call", Name: "read_file"}, Output{ToolCalls: reading}, true, ""},
		{"first-tool-call is not the second", Check{Type: "first-tool-call", Name: "respond_to_user"}, Output{ToolCalls: reading}, false, "the first call was read_file"},
		{"first-tool-call args", Check{Type: "first-tool-call", Name: "read_file", Args: map[string]any{"path": "config.json"}}, Output{ToolCalls: reading}, false, "path: want"},
		{"tool-call-count exact", Check{Type: "tool-call-count", Value: "2"}, Output{ToolCalls: two}, true, ""},
		{"tool-call-count short", Check{Type: "tool-call-count", Value: "2"}, Output{ToolCalls: two[:1]}, false, "1 call(s)"},
		{"tool-call-count at least, by name", Check{Type: "tool-call-count", Name: "get_weather", Value: ">=1"}, Output{ToolCalls: two}, true, ""},
		{"tool-args-enum", Check{Type: "tool-args-enum", Name: "route_ticket", Args: map[string]any{"priority": []any{"low", "medium", "high"}}}, Output{ToolCalls: ticket}, true, ""},
		{"tool-args-enum out of it", Check{Type: "tool-args-enum", Name: "route_ticket", Args: map[string]any{"department": []any{"sales", "support"}}}, Output{ToolCalls: ticket}, false, `department: string "returns" is not one of`},
		{"tool-args-enum missing", Check{Type: "tool-args-enum", Name: "route_ticket", Args: map[string]any{"team": []any{"a"}}}, Output{ToolCalls: ticket}, false, "team: missing"},
		{"tool-args-enum no such call", Check{Type: "tool-args-enum", Name: "route", Args: map[string]any{"team": []any{"a"}}}, Output{ToolCalls: ticket}, false, "no call to route"},
		{"tool-args-required", Check{Type: "tool-args-required", Name: "transfer", Args: map[string]any{"params": []any{"from_account", "to_account", "amount"}}}, Output{ToolCalls: transfer}, true, ""},
		{"tool-args-required lacking", Check{Type: "tool-args-required", Name: "transfer", Args: map[string]any{"params": []any{"amount", "currency"}}}, Output{ToolCalls: transfer}, false, "lacks currency"},
		{"tool-args-types", Check{Type: "tool-args-types", Name: "transfer", Args: map[string]any{"amount": "number"}}, Output{ToolCalls: transfer}, false, `amount: want number, got string "500"`},
		{"tool-args-types nested structure", Check{Type: "tool-args-types", Name: "create_event", Args: map[string]any{"title": "string", "time": map[string]any{"start": "string", "duration_minutes": "integer"}}}, Output{ToolCalls: event}, true, ""},
		{"tool-args-types flat is not nested", Check{Type: "tool-args-types", Name: "create_event", Args: map[string]any{"time": map[string]any{"start": "string"}}}, Output{ToolCalls: flat}, false, "time: missing"},
		{"tool-args-pattern", Check{Type: "tool-args-pattern", Args: map[string]any{"path": `config\.json$`}}, Output{ToolCalls: reading}, true, ""},
		{"tool-args-pattern miss", Check{Type: "tool-args-pattern", Name: "read_file", Args: map[string]any{"path": `^2025-`}}, Output{ToolCalls: reading}, false, "does not match"},
		{"tool-args-contains ignores case", Check{Type: "tool-args-contains", Name: "read_file", Args: map[string]any{"path": "CONFIG.json"}}, Output{ToolCalls: reading}, true, ""},
		{"tool-args-contains a number is no string", Check{Type: "tool-args-contains", Name: "get_weather", Args: map[string]any{"city": "x"}}, Output{ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: `{"city": 5}`}}}, false, "not a string"},
		{"valid-tool-calls", Check{Type: "valid-tool-calls", Args: map[string]any{"tools": tools}}, Output{ToolCalls: append(two, chat.ToolCall{Name: "now"})}, true, ""},
		{"valid-tool-calls unknown tool", Check{Type: "valid-tool-calls", Args: map[string]any{"tools": tools}}, Output{ToolCalls: ticket}, false, `"route_ticket", which is not among the tools`},
		{"valid-tool-calls schema", Check{Type: "valid-tool-calls", Args: map[string]any{"tools": tools}}, Output{ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: `{"town": "x"}`}}}, false, "city"},
		{"valid-tool-calls bad JSON", Check{Type: "valid-tool-calls", Args: map[string]any{"tools": tools}}, Output{ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: `{"city": `}}}, false, "not JSON"},
		{"valid-tool-calls no call", Check{Type: "valid-tool-calls", Args: map[string]any{"tools": tools}}, Output{Content: "sunny"}, false, "no tool call"},
		{"not-valid-tool-calls", Check{Type: "not-valid-tool-calls", Args: map[string]any{"tools": tools}}, Output{Content: "sunny"}, true, ""},
	}
	runDecides(t, tests)
}

func runDecides(t *testing.T, tests []struct {
	name   string
	check  Check
	out    Output
	pass   bool
	reason string
}) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidateCheck(tt.check); err != nil {
				t.Fatalf("ValidateCheck: %v", err)
			}
			r := RunChecks([]Check{tt.check}, tt.out)[0]
			if r.Pass != tt.pass {
				t.Fatalf("Pass = %v, want %v (reason %q)", r.Pass, tt.pass, r.Reason)
			}
			if !r.Pass && !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", r.Reason, tt.reason)
			}
		})
	}
}

func TestNewChecksValidate(t *testing.T) {
	tests := []struct {
		check  Check
		errHas string
	}{
		{Check{Type: "contains-any"}, "needs args.values"},
		{Check{Type: "contains-all", Args: map[string]any{"values": "x"}}, "must be a list"},
		{Check{Type: "contains-all", Args: map[string]any{"values": []any{}}}, "is empty"},
		{Check{Type: "contains-json", Schema: map[string]any{"type": "text"}}, "bad schema"},
		{Check{Type: "levenshtein"}, "needs a value"},
		{Check{Type: "levenshtein", Value: "a", Args: map[string]any{"threshold": 1.5}}, "whole number"},
		{Check{Type: "verdict", Value: "a pass"}, "one word"},
		{Check{Type: "response-type", Value: "speech"}, "not one of text, tool_call, json"},
		{Check{Type: "tool-call-any"}, "needs args.names"},
		{Check{Type: "first-tool-call"}, "function's name"},
		{Check{Type: "tool-call-count", Value: "two"}, "not a number of calls"},
		{Check{Type: "tool-args-enum", Name: "f"}, "needs args naming"},
		{Check{Type: "tool-args-enum", Name: "f", Args: map[string]any{"a": "x"}}, "args.a: must list"},
		{Check{Type: "tool-args-types", Args: map[string]any{"a": "text-ish"}}, `unknown type "text-ish"`},
		{Check{Type: "tool-args-types", Args: map[string]any{"a": map[string]any{"b": "strin"}}}, "args.a: b: unknown type"},
		{Check{Type: "tool-args-pattern", Args: map[string]any{"a": "("}}, "args.a"},
		{Check{Type: "tool-args-required", Args: map[string]any{"params": []any{}}}, "empty"},
		{Check{Type: "valid-tool-calls"}, "needs args.tools"},
		{Check{Type: "javascript"}, "needs the script"},
		{Check{Type: "javascript", Value: "x", Args: map[string]any{"threshold": "high"}}, "threshold must be a number"},
	}
	for _, tt := range tests {
		t.Run(tt.check.Type+" "+tt.errHas, func(t *testing.T) {
			err := ValidateCheck(tt.check)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("ValidateCheck = %v, want %q", err, tt.errHas)
			}
			// Run reports the same problem rather than deciding.
			r := RunChecks([]Check{tt.check}, Output{Content: "x"})[0]
			if r.Pass || !strings.HasPrefix(r.Reason, "invalid check") {
				t.Errorf("RunChecks = %+v, want an invalid check", r)
			}
		})
	}
}

func TestNewCheckNames(t *testing.T) {
	tests := []struct {
		check Check
		want  string
	}{
		{Check{Type: "contains-any", Args: map[string]any{"values": []any{"a", "b"}}}, `contains-any "a", "b"`},
		{Check{Type: "tool-args-enum", Name: "route", Args: map[string]any{"team": []any{"a", "b"}}}, `tool-args-enum route({"team":["a","b"]})`},
		{Check{Type: "tool-args-required", Args: map[string]any{"params": []any{"a", "b"}}}, "tool-args-required any tool(a, b)"},
		{Check{Type: "tool-call-count", Name: "f", Value: "2"}, "tool-call-count f = 2"},
		{Check{Type: "tool-call-any", Args: map[string]any{"names": []any{"a", "b"}}}, "tool-call-any a|b"},
		{Check{Type: "levenshtein", Value: "Paris"}, `levenshtein "Paris" ≤5`},
		{Check{Type: "javascript", Value: "const r = JSON.parse(output);\nreturn r"}, "javascript const r = JSON.parse(output);"},
		{Check{Type: "javascript", Value: "module.exports = () => true", Args: map[string]any{"file": "checks/len.js"}}, "javascript checks/len.js"},
	}
	for _, tt := range tests {
		if got := RunChecks([]Check{tt.check}, Output{})[0].Name; got != tt.want {
			t.Errorf("Name = %s, want %s", got, tt.want)
		}
	}
}

func TestBoundedEditDistanceAgreesWithTheFullOne(t *testing.T) {
	words := []string{"", "a", "ab", "ba", "kitten", "sitting", "Paris", "Parsi", "Pariss", "héllo", "hello", "flaw", "lawn", "abcdef", "azcedf"}
	for _, a := range words {
		for _, b := range words {
			full := editDistanceFull(a, b)
			for limit := 0; limit <= 7; limit++ {
				d, ok := boundedEditDistance(a, b, limit)
				if ok != (full <= limit) || (ok && d != full) {
					t.Errorf("bounded(%q, %q, %d) = %d, %v; full distance %d", a, b, limit, d, ok, full)
				}
			}
		}
	}
}

func editDistanceFull(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
		}
	}
	return d[len(ra)][len(rb)]
}

func TestJavascriptWithoutAnEngineSaysSo(t *testing.T) {
	// The test binary links edges/jsassert (script_test.go); take it away.
	if e := scriptEngine.Load(); e != nil {
		t.Cleanup(func() { RegisterScriptEngine(*e) })
	}
	RegisterScriptEngine(nil)
	c := Check{Type: "javascript", Value: "output === 'x'"}
	if err := ValidateCheck(c); !errors.Is(err, ErrNoScriptEngine) {
		t.Fatalf("ValidateCheck = %v, want ErrNoScriptEngine", err)
	}
	r := RunChecks([]Check{c}, Output{Content: "x"})[0]
	if r.Pass || !strings.Contains(r.Reason, "edges/jsassert") {
		t.Errorf("RunChecks = %+v, want an invalid check naming the engine to link", r)
	}
}
