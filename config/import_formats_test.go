package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const bfclLines = `{"id": "simple_7", "question": [[{"role": "user", "content": "Area of a triangle with base 10 and height 5?"}]], "function": [{"name": "calculate_triangle_area", "description": "Area of a triangle.", "parameters": {"type": "dict", "properties": {"base": {"type": "integer"}, "height": {"type": "float"}, "unit": {"type": "string"}, "dims": {"type": "tuple", "items": {"type": "any"}}}, "required": ["base", "height"]}}], "ground_truth": [{"calculate_triangle_area": {"base": [10], "height": [5, 5.0], "unit": ["units", ""]}}]}
{"id": "multi_turn_base_0", "question": [[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "List files."}], [{"role": "user", "content": "Now delete them."}]], "function": {"type": "function", "function": {"name": "ls", "parameters": {"type": "object", "properties": {}}}}, "metadata": {"category": "files", "severity": "Warning"}, "execution_result_type": ["exact"]}
`

func TestImportBFCL(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bfcl.jsonl", bfclLines)
	tests, warnings, err := loadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	if ids := testIDs(tests); !reflect.DeepEqual(ids, []string{"simple_7", "multi_turn_base_0"}) {
		t.Fatalf("ids = %v", ids)
	}
	s := tests[0]
	if s.User != "Area of a triangle with base 10 and height 5?" || s.Category != "simple" || len(s.Tools) != 1 {
		t.Errorf("test = %+v", s)
	}
	params := s.Tools[0].Function.Parameters.(map[string]any)
	props := params["properties"].(map[string]any)
	if params["type"] != "object" || props["height"].(map[string]any)["type"] != "number" || props["dims"].(map[string]any)["type"] != "array" {
		t.Errorf("BFCL types not translated: %v", params)
	}
	if _, ok := props["dims"].(map[string]any)["items"].(map[string]any)["type"]; ok {
		t.Errorf("type any kept: %v", props["dims"])
	}
	want := []check.Check{
		{Type: "tool-call-count", Value: "1"},
		{Type: "tool-call", Name: "calculate_triangle_area"},
		{Type: "tool-args-enum", Name: "calculate_triangle_area", Args: map[string]any{"base": []any{float64(10)}, "height": []any{float64(5), float64(5)}}},
	}
	if !reflect.DeepEqual(s.Checks, want) {
		t.Errorf("checks = %#v\nwant %#v", s.Checks, want)
	}
	good := check.Output{ToolCalls: []chat.ToolCall{{Name: "calculate_triangle_area", Arguments: `{"base": 10, "height": 5}`}}}
	if res := check.RunChecks(s.Checks, good); !check.Passed(res) {
		t.Errorf("the right call fails: %+v", res)
	}
	m := tests[1]
	if m.System != "Be terse." || m.User != "List files." || m.Category != "files" || m.Severity != "warning" || m.Tools[0].Function.Name != "ls" {
		t.Errorf("test = %+v", m)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"1× BFCL multi-turn question: only its first turn is sent", `1× BFCL key "execution_result_type" is not read`} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

// Files that are not batteries say what they are.
func TestLookalikesSayWhatTheyAre(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, body string
		want             []string
	}{
		{"prompt-prix results export", "results.json",
			`{"tests": ["basic_tool_call"], "models": ["m1"], "results": [{"test_id": "basic_tool_call", "model_id": "m1", "status": "completed", "response": "ok", "latency_ms": 12}]}`,
			[]string{"this looks like a prompt-prix results export", "pitwall import FILE --battery BATTERY"}},
		{"prompt-prix consistency export", "consistency.json",
			`{"tests": ["a"], "models": ["m"], "runs_total": 3, "aggregates": [{"test_id": "a", "model_id": "m", "passes": 2, "total": 3}]}`,
			[]string{"a prompt-prix consistency export", "pitwall import"}},
		{"promptfoo results", "pf-results.json", `{"evalId": "eval-1", "results": {"version": 3, "results": [], "stats": {}}, "config": {}}`,
			[]string{"a promptfoo results file", "pitwall import"}},
		{"inspect eval log", "log.json", `{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": []}`,
			[]string{"an inspect eval log"}},
		{"pitwall export", "export.json", `{"run": {"id": "r1"}, "models": [], "tests": [], "cells": []}`,
			[]string{"a pitwall run export", "pitwall show RUN"}},
		{"pitwall config", "pitwall.toml", "battery = \"b.toml\"\nmodels = [\"m\"]\n[[servers]]\nname = \"s\"\n",
			[]string{"a pitwall config"}},
		{"BFCL ground truth", "possible_answer.jsonl", `{"id": "simple_0", "ground_truth": [{"f": {"a": [1]}}]}` + "\n",
			[]string{"a BFCL ground-truth file", "question"}},
		{"judge ground truth", "verdicts.jsonl", `{"id": "t1", "expected_verdict": "PASS"}` + "\n" + `{"id": "t2", "expected_verdict": "FAIL"}` + "\n",
			[]string{"a judge ground-truth file"}},
		{"a promptfoo tests file", "tests.yaml", "- vars: {q: hi}\n  assert: [{type: contains, value: hi}]\n",
			[]string{"a promptfoo tests file"}},
		{"an object of something else", "other.json", `{"name": "x", "items": [1, 2]}`,
			[]string{"not a battery", "the keys items, name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, tt.file, tt.body)
			_, err := LoadBattery(p)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n"); n > 0 {
				t.Errorf("%d lines for one fact: %v", n+1, err)
			}
		})
	}
}

// goType matches what Go's decoders would show: type names of this
// package, Go's maps and slices, struct-field talk.
var goType = regexp.MustCompile(`config\.|Go struct|Go value|map\[|\[\]|interface \{\}|int64|float64|\bstruct\b|rawBattery|RawTest|ppPrompt|pfTest`)

// No message names a Go type, whatever the value of the wrong type.
func TestMessagesNameNoGoTypes(t *testing.T) {
	dir := t.TempDir()
	bodies := map[string]string{
		"native.json":       `{"tests": ["just a string", {"id": 5, "user": ["x"], "tools": {"a": 1}, "checks": "none", "messages": [{"role": "user", "content": "x", "tool_calls": "f"}], "max_iterations": "3"}]}`,
		"native.toml":       "[[tests]]\nid = 5\nuser = [1]\nchecks = \"x\"\nmessages = [{ role = 1 }]\nmock_tools = 3\nmode = \"agent\"\n",
		"prompt-prix.json":  `{"prompts": [{"id": ["x"], "user": 5, "expected": "nope", "tools": "t", "messages": {"a": 1}, "mock_tools": [1], "max_iterations": 1.5}]}`,
		"prompt-prix.jsonl": `{"id": 1, "user": {"a": 1}, "expected": {"tool_name_any": "x", "params_enum_valid": [1], "params_types": {"a": "texty"}, "tool_calls": 3, "no_tool_call": "yes"}}` + "\n",
		"promptfoo.yaml":    "prompts: [\"{{q}}\"]\ntests:\n  - vars: [1, 2]\n    assert: {type: contains}\n  - description: [1]\n    assert:\n      - type: 5\n      - type: contains-any\n        value: {a: 1}\n      - type: javascript\n        value: 'return ('\n",
		"inspect.jsonl":     `{"input": [{"role": 1}], "target": 5}` + "\n" + `{"input": 3}` + "\n",
		"bfcl.jsonl":        `{"id": "x", "question": "q", "function": [3]}` + "\n",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, dir, name, body)
			_, err := LoadBattery(p)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if m := goType.FindString(line); m != "" {
					t.Errorf("%q names a Go type (%s)", line, m)
				}
			}
		})
	}
}

func TestPromptPrixTestsAreTakenAsPromptPrixSendsThem(t *testing.T) {
	body := `{"prompts": [
  {"id": "plain", "user": "hi"},
  {"id": "with-messages", "system": "ignored by prompt-prix", "user": "u",
   "messages": [{"role": "user", "content": "u"}], "notes_for_me": "x"},
  {"id": "react-with-messages", "user": "go", "mode": "react",
   "tools": [{"type": "function", "function": {"name": "f"}}],
   "messages": [{"role": "user", "content": "earlier"}]},
  {"id": "formatted", "user": "JSON please", "severity": "Critical",
   "response_format": {"type": "json_schema", "json_schema": {"name": "city", "schema": {"type": "object"}}},
   "expected_response": "{\"city\": \"Paris\"}", "expected": {"response_type": "json"}}
]}`
	p := writeFile(t, t.TempDir(), "pp.json", body)
	tests, warnings, err := loadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	m := byID(tests)
	if c := m["plain"].Conversation(); len(c) != 2 || c[0].Content != "You are a helpful assistant." {
		t.Errorf("without system, prompt-prix's default is sent: %+v", c)
	}
	if c := m["with-messages"].Conversation(); len(c) != 1 || c[0].Content != "u" {
		t.Errorf("messages are sent as written: %+v", c)
	}
	if r := m["react-with-messages"]; r.Mode != ModeAgent || len(r.Messages) != 0 || r.User != "go" {
		t.Errorf("react starts from system and user: %+v", r)
	}
	f := m["formatted"]
	if f.Severity != "critical" || f.ResponseFormat == nil || f.ResponseFormat.Name != "city" || !strings.HasPrefix(f.Reference, `{"city": "Paris"}`) {
		t.Errorf("test = %+v", f)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"1× test with messages and system: prompt-prix sends the messages as written",
		"1× react test with messages", `1× prompt-prix key "notes_for_me" is not read`} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

// A key of expected that cannot be checked as written is an error at that
// key, in prompt-prix's words, not at a check the file never wrote.
func TestPromptPrixExpectedProblemsNameTheirKey(t *testing.T) {
	body := `{"prompts": [{"id": "bad-expected", "user": "x", "tools": [{"type": "function", "function": {"name": "f"}}],
  "expected": {"tool_name": "f",
    "params_enum_valid": {"a": "not a list"},
    "params_types": [1],
    "tool_calls_count": "two",
    "match_mode": "fuzzy"}}]}`
	p := writeFile(t, t.TempDir(), "pp.json", body)
	_, err := LoadBattery(p)
	wantErr(t, err, p, lineOf(t, p, "params_enum_valid", 1), "prompts[0].expected.params_enum_valid", `test "bad-expected"`, "args.a: must list the allowed values")
	wantErr(t, err, p, lineOf(t, p, "params_types", 1), "prompts[0].expected.params_types", "must be an object naming arguments")
	wantErr(t, err, p, lineOf(t, p, "tool_calls_count", 1), "prompts[0].expected.tool_calls_count", `count "two" is not a number of calls`)
}

func TestInspectToolCallsAreRead(t *testing.T) {
	line := `{"id": "s1", "input": [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": "get_weather", "arguments": {"city": "Oslo"}, "type": "function"}]}, {"role": "tool", "tool_call_id": "c1", "content": "Rain"}, {"role": "user", "content": "Umbrella?"}], "target": "yes"}` + "\n"
	p := writeFile(t, t.TempDir(), "s.jsonl", line)
	tests, err := LoadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	calls := tests[0].Messages[1].ToolCalls
	if len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Arguments != `{"city":"Oslo"}` {
		t.Errorf("tool calls = %+v", calls)
	}
}

// A script that throws says which test it belongs to, where it is written.
func TestAThrowingScriptNamesItsTest(t *testing.T) {
	body := "prompts: [\"{{q}}\"]\ntests:\n  - metadata: {test_id: weather}\n    vars: {q: x}\n    assert:\n      - type: javascript\n        value: JSON.parse(output).city\n"
	p := writeFile(t, t.TempDir(), "pf.yaml", body)
	tests, err := LoadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	r := check.RunChecks(tests[0].Checks, check.Output{Content: "not JSON"})[0]
	want := `test "weather" (` + p + `:3): javascript assertion: threw SyntaxError`
	if r.Pass || !strings.Contains(r.Reason, want) {
		t.Errorf("reason = %q, want it to contain %q", r.Reason, want)
	}
}

// Records of the linked formats are told apart by their keys alone, so
// each object is claimed by one format at most, whatever order the edges
// registered in.
func TestEachRecordIsClaimedByOneFormatAtMost(t *testing.T) {
	cases := []struct {
		record string
		want   string // the claiming format's name; "" for none
	}{
		{`{"input": "q", "target": "a"}`, "inspect"},
		{`{"input": "q", "question": [], "function": [], "user": "u"}`, "inspect"},
		{`{"id": "simple_1", "question": [], "function": []}`, "BFCL"},
		{`{"function": [], "user": "u"}`, "BFCL"},
		{`{"id": "a", "user": "u"}`, "prompt-prix"},
		{`{"user": "u", "tests": []}`, ""},
		{`{"id": "a", "prompt": "p"}`, ""},
	}
	for _, tc := range cases {
		var m map[string]any
		if err := json.Unmarshal([]byte(tc.record), &m); err != nil {
			t.Fatal(err)
		}
		var claims []string
		for _, f := range formats {
			if f.Records != nil && f.Records.Claims(m) {
				claims = append(claims, f.Name)
			}
		}
		want := []string{}
		if tc.want != "" {
			want = []string{tc.want}
		}
		if len(claims) != len(want) || (len(want) == 1 && claims[0] != want[0]) {
			t.Errorf("%s is claimed by %v, want %v", tc.record, claims, want)
		}
	}
	if f := linesFormat(); f == nil || f.Name != "prompt-prix" {
		t.Errorf("JSONL's unclaimed lines go to %v, want prompt-prix", f)
	}
}
