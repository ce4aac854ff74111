package check

import (
	"pitwall/gpu/chat"
	"strings"
	"testing"
	"time"
)

// ageSchema is written the way BurntSushi/toml decodes it.
var ageSchema = map[string]any{"type": "object", "required": []string{"age"},
	"properties": map[string]any{"age": map[string]any{"type": "integer", "minimum": int64(0)}}}

func TestRunChecksDecides(t *testing.T) {
	weather := []chat.ToolCall{{Name: "get_weather", Arguments: `{"city": "Tokyo", "days": 3, "units": {"temp": "C"}}`}}
	tests := []struct {
		name   string
		check  Check
		out    Output
		pass   bool
		reason string // when set, a failing result's Reason must contain it
	}{
		{"equals ignores surrounding space", Check{Type: "equals", Value: "Paris"}, Output{Content: " Paris\n"}, true, ""},
		{"equals is exact otherwise", Check{Type: "equals", Value: "Paris"}, Output{Content: "paris"}, false, `reply was "paris"`},
		{"contains", Check{Type: "contains", Value: "Paris"}, Output{Content: "It is Paris."}, true, ""},
		{"contains is case-sensitive", Check{Type: "contains", Value: "Paris"}, Output{Content: "it is paris"}, false, `reply was "it is paris"`},
		{"icontains", Check{Type: "icontains", Value: "PARIS"}, Output{Content: "it is paris"}, true, ""},
		{"icontains missing", Check{Type: "icontains", Value: "rome"}, Output{Content: "it is paris"}, false, "paris"},
		{"regex", Check{Type: "regex", Value: `\b\d{4}\b`}, Output{Content: "In 1969."}, true, ""},
		{"regex miss", Check{Type: "regex", Value: `^\d+$`}, Output{Content: "forty"}, false, `"forty"`},
		{"starts-with skips leading space", Check{Type: "starts-with", Value: "Yes"}, Output{Content: "\n Yes, it is."}, true, ""},
		{"starts-with miss", Check{Type: "starts-with", Value: "Yes"}, Output{Content: "No."}, false, `reply starts "No."`},
		{"is-json", Check{Type: "is-json"}, Output{Content: `{"a": 1}`}, true, ""},
		{"is-json in a fence", Check{Type: "is-json"}, Output{Content: "```json\n[1, 2]\n```"}, true, ""},
		{"is-json prose", Check{Type: "is-json"}, Output{Content: "Sure! {\"a\": 1}"}, false, "not JSON"},
		{"is-json one-line fence", Check{Type: "is-json"}, Output{Content: "```{\"a\": 1}```"}, true, ""},
		{"is-json other language fence", Check{Type: "is-json"}, Output{Content: "```python\n{\"a\": 1}\n```"}, false, "not JSON"},
		{"json-schema met", Check{Type: "json-schema", Schema: ageSchema}, Output{Content: "```json\n{\"age\": 36}\n```"}, true, ""},
		{"json-schema broken", Check{Type: "json-schema", Schema: ageSchema}, Output{Content: `{"age": "old"}`}, false, `$.age: want integer, got string "old"`},
		{"json-schema prose", Check{Type: "json-schema", Schema: ageSchema}, Output{Content: "Age: 36"}, false, "not JSON"},
		{"think is not the answer", Check{Type: "contains", Value: "Lyon"}, Output{Content: "<think>Lyon? no.</think>Paris"}, false, `"Paris"`},
		{"tool-call by name", Check{Type: "tool-call", Name: "get_weather"}, Output{ToolCalls: weather}, true, ""},
		{"tool-call args subset", Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "tokyo "}}, Output{ToolCalls: weather}, true, ""},
		{"tool-call TOML integer matches JSON number", Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"days": int64(3)}}, Output{ToolCalls: weather}, true, ""},
		{"tool-call float matches integer", Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"days": 3.0}}, Output{ToolCalls: weather}, true, ""},
		{"tool-call nested args", Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"units": map[string]any{"temp": "c"}}}, Output{ToolCalls: weather}, true, ""},
		{"tool-call wrong value", Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Osaka"}}, Output{ToolCalls: weather}, false, `city: want string "Osaka", got string "Tokyo"`},
		{"tool-call number is not a string", Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"days": "3"}}, Output{ToolCalls: weather}, false, "days: want string"},
		{"tool-call missing arg", Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"country": "JP"}}, Output{ToolCalls: weather}, false, "country: missing"},
		{"tool-call wrong name", Check{Type: "tool-call", Name: "get_time"}, Output{ToolCalls: weather}, false, "called get_weather("},
		{"tool-call none made", Check{Type: "tool-call", Name: "get_time"}, Output{Content: "It is noon."}, false, "no tool call"},
		{"tool-call bad argument JSON", Check{Type: "tool-call", Name: "f", Args: map[string]any{"a": 1}}, Output{ToolCalls: []chat.ToolCall{{Name: "f", Arguments: "{a:1"}}}, false, "not JSON"},
		{"tool-call any matching call", Check{Type: "tool-call", Name: "f", Args: map[string]any{"a": 2}},
			Output{ToolCalls: []chat.ToolCall{{Name: "f", Arguments: `{"a":1}`}, {Name: "f", Arguments: `{"a":2}`}}}, true, ""},
		{"tool-call array args in order", Check{Type: "tool-call", Name: "f", Args: map[string]any{"xs": []any{1, 2}}},
			Output{ToolCalls: []chat.ToolCall{{Name: "f", Arguments: `{"xs":[2,1]}`}}}, false, "xs[0]: want number 1, got number 2"},
		{"tool-call empty arguments are {}", Check{Type: "tool-call", Name: "now", Args: map[string]any{}}, Output{ToolCalls: []chat.ToolCall{{Name: "now"}}}, true, ""},
		{"no-tool-call", Check{Type: "no-tool-call"}, Output{Content: "hi"}, true, ""},
		{"no-tool-call with a call", Check{Type: "no-tool-call"}, Output{ToolCalls: weather}, false, "called get_weather"},
		{"not-refusal", Check{Type: "not-refusal"}, Output{Content: "The API can't be called twice."}, true, ""},
		{"not-refusal refused", Check{Type: "not-refusal"}, Output{Content: "I'm sorry, but I can't help with that."}, false, "refusal"},
		{"max-latency", Check{Type: "max-latency", Value: "2s"}, Output{Latency: 1500 * time.Millisecond}, true, ""},
		{"max-latency at the limit", Check{Type: "max-latency", Value: "2s"}, Output{Latency: 2 * time.Second}, true, ""},
		{"max-latency over", Check{Type: "max-latency", Value: "2s"}, Output{Latency: 2345 * time.Millisecond}, false, "took 2.35s"},
		{"type is case-insensitive", Check{Type: " Contains ", Value: "a"}, Output{Content: "a"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RunChecks([]Check{tt.check}, tt.out)
			if len(got) != 1 {
				t.Fatalf("got %d results, want 1", len(got))
			}
			r := got[0]
			if r.Pass != tt.pass {
				t.Fatalf("Pass = %v, want %v (reason %q)", r.Pass, tt.pass, r.Reason)
			}
			if r.Pass && r.Reason != "" {
				t.Errorf("a passing check has Reason %q", r.Reason)
			}
			if !r.Pass && !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", r.Reason, tt.reason)
			}
		})
	}
}

func TestRunChecksNotInverts(t *testing.T) {
	out := Output{Content: "Paris, France", ToolCalls: nil, Latency: time.Second}
	refusal := Output{Content: "As an AI, I must decline."}
	tests := []struct {
		check  Check
		out    Output
		pass   bool
		reason string
	}{
		{Check{Type: "not-contains", Value: "Paris"}, out, false, `found in "Paris, France"`},
		{Check{Type: "not-contains", Value: "Rome"}, out, true, ""},
		{Check{Type: "not-equals", Value: "Paris, France"}, out, false, "exactly"},
		{Check{Type: "not-regex", Value: "(?i)france"}, out, false, "matched"},
		{Check{Type: "not-starts-with", Value: "Paris"}, out, false, "reply starts"},
		{Check{Type: "not-is-json"}, out, true, ""},
		{Check{Type: "not-json-schema", Schema: ageSchema}, Output{Content: `{"age": 3}`}, false, "meets the schema"},
		{Check{Type: "not-tool-call", Name: "f"}, out, true, ""},
		{Check{Type: "not-no-tool-call"}, out, false, "no tool call"},
		{Check{Type: "not-not-refusal"}, refusal, true, ""},
		{Check{Type: "not-not-refusal"}, out, false, "not a refusal"},
		{Check{Type: "not-max-latency", Value: "2s"}, out, false, "took 1s"},
		// An invalid check fails in its not- form too, rather than passing by inversion.
		{Check{Type: "not-regex", Value: "("}, out, false, "invalid check"},
		{Check{Type: "not-json-schema"}, out, false, "invalid check"},
	}
	for _, tt := range tests {
		t.Run(tt.check.Type+" "+tt.check.Value, func(t *testing.T) {
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

func TestRunChecksNamesAreReadable(t *testing.T) {
	tests := []struct {
		check Check
		want  string
	}{
		{Check{Type: "contains", Value: "Paris"}, `contains "Paris"`},
		{Check{Type: "not-icontains", Value: "sorry"}, `not-icontains "sorry"`},
		{Check{Type: "regex", Value: `^\d+$`}, `regex /^\d+$/`},
		{Check{Type: "equals", Value: strings.Repeat("x", 60)}, `equals "` + strings.Repeat("x", 39) + `…"`},
		{Check{Type: "is-json"}, "is-json"},
		{Check{Type: "tool-call", Name: "get_weather"}, "tool-call get_weather"},
		{Check{Type: "tool-call", Name: "f", Args: map[string]any{"b": 1, "a": "<x>"}}, `tool-call f({"a":"<x>","b":1})`},
		{Check{Type: "max-latency", Value: "2s"}, "max-latency 2s"},
		{Check{Type: "bogus"}, "bogus"},
	}
	for _, tt := range tests {
		got := RunChecks([]Check{tt.check}, Output{})[0].Name
		if got != tt.want {
			t.Errorf("Name = %s, want %s", got, tt.want)
		}
	}
}

func TestRunChecksReasonsAreClipped(t *testing.T) {
	long := strings.Repeat("word ", 200)
	r := RunChecks([]Check{{Type: "contains", Value: "absent"}}, Output{Content: long})[0]
	if len([]rune(r.Reason)) > 120 {
		t.Errorf("Reason is %d characters long, want it clipped: %q", len([]rune(r.Reason)), r.Reason)
	}
	if !strings.Contains(r.Reason, "…") {
		t.Errorf("Reason %q does not show that it was cut", r.Reason)
	}
}

func TestRunChecksKeepsOrder(t *testing.T) {
	checks := []Check{{Type: "contains", Value: "a"}, {Type: "contains", Value: "z"}, {Type: "is-json"}}
	got := RunChecks(checks, Output{Content: "abc"})
	want := []bool{true, false, false}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Pass != want[i] {
			t.Errorf("result %d (%s) Pass = %v, want %v", i, got[i].Name, got[i].Pass, want[i])
		}
	}
	if RunChecks(nil, Output{}) != nil {
		t.Error("no checks should give no results")
	}
}

func TestValidateCheckNamesTheProblem(t *testing.T) {
	tests := []struct {
		name   string
		check  Check
		errHas string // "" = valid
	}{
		{"valid contains", Check{Type: "contains", Value: "x"}, ""},
		{"valid not- form", Check{Type: "not-regex", Value: "x+"}, ""},
		{"valid double negation", Check{Type: "not-not-refusal"}, ""},
		{"valid schema", Check{Type: "json-schema", Schema: map[string]any{"type": "object"}}, ""},
		{"valid tool-call with TOML args", Check{Type: "tool-call", Name: "f", Args: map[string]any{"n": int64(2), "xs": []any{int64(1)}}}, ""},
		{"valid latency", Check{Type: "max-latency", Value: "1500ms"}, ""},
		{"no type", Check{Value: "x"}, "no type"},
		{"unknown type", Check{Type: "has-word"}, `unknown check type "has-word"`},
		{"misspelt type", Check{Type: "contain", Value: "x"}, `did you mean "contains"`},
		{"misspelt not- type", Check{Type: "not-contians", Value: "x"}, `did you mean "not-contains"`},
		{"missing value", Check{Type: "contains"}, "needs a value"},
		{"bad regex", Check{Type: "regex", Value: "a(b"}, "bad regex"},
		{"tool-call without name", Check{Type: "tool-call", Args: map[string]any{"a": 1}}, "function's name"},
		{"tool-call args not JSON-like", Check{Type: "tool-call", Name: "f", Args: map[string]any{"c": make(chan int)}}, "args"},
		{"bad duration", Check{Type: "max-latency", Value: "2 seconds"}, "bad duration"},
		{"bare number duration", Check{Type: "max-latency", Value: "2"}, "bad duration"},
		{"zero duration", Check{Type: "not-max-latency", Value: "0s"}, "positive"},
		{"missing schema", Check{Type: "json-schema"}, "needs a schema"},
		{"bad schema type", Check{Type: "json-schema", Schema: map[string]any{"type": "text"}}, "unknown type"},
		{"bad schema pattern", Check{Type: "json-schema", Schema: map[string]any{"pattern": "("}}, "pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateCheck(tt.check)
			if tt.errHas == "" {
				if err != nil {
					t.Fatalf("ValidateCheck = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("ValidateCheck = %v, want an error containing %q", err, tt.errHas)
			}
		})
	}
}

func TestValidCheckTypesAreAllAccepted(t *testing.T) {
	types := ValidCheckTypes()
	if len(types) != 2*len(baseCheckTypes) {
		t.Fatalf("got %d types, want each base type and its not- form (%d)", len(types), 2*len(baseCheckTypes))
	}
	for _, typ := range types {
		if _, _, ok := lookupCheck(typ); !ok {
			t.Errorf("ValidCheckTypes lists %q but RunChecks does not know it", typ)
		}
	}
}
