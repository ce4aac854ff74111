package promptfoo

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
)

// configBatteries holds the promptfoo batteries config's own tests load
// too (through this package, which they link).
var configBatteries = filepath.Join("..", "..", "config", "testdata", "batteries")

func TestPromptfooCandidateOutputIsReadAsAModelSendsIt(t *testing.T) {
	calls := func(cs ...chat.ToolCall) []chat.ToolCall { return cs }
	cases := []struct {
		name  string
		in    any
		text  string
		calls []chat.ToolCall
	}{
		{"plain text, trailing newline of a block scalar", "It is sunny.\n", "It is sunny.", nil},
		{"a JSON string is the reply text", `"It is sunny."` + "\n", "It is sunny.", nil},
		{"text that only looks like JSON", "[citation needed] it is sunny", "[citation needed] it is sunny", nil},
		{"a list over several lines", "[\n  {\"function\": {\"name\": \"a\", \"arguments\": \"{}\"}},\n  {\"function\": {\"name\": \"b\", \"arguments\": \"{}\"}}\n]\n",
			"", calls(chat.ToolCall{Name: "a", Arguments: "{}"}, chat.ToolCall{Name: "b", Arguments: "{}"})},
		{"null arguments", `[{"id": "c", "function": {"name": "a", "arguments": null}}]`, "", calls(chat.ToolCall{ID: "c", Name: "a"})},
		{"malformed arguments kept as written", `[{"function": {"name": "a", "arguments": "{city: Tokyo}"}}]`, "",
			calls(chat.ToolCall{Name: "a", Arguments: "{city: Tokyo}"})},
		{"object arguments as JSON", `{"name": "a", "arguments": {"n": 1}}`, "", calls(chat.ToolCall{Name: "a", Arguments: `{"n":1}`})},
		{"an empty list is no reply", "[]", "", []chat.ToolCall{}},
		{"a list of other things is text", `[1, 2]`, "[1, 2]", nil},
		{"an object that is no call is text", `{"verdict": "PASS"}`, `{"verdict": "PASS"}`, nil},
		{"a YAML table that is no call is its JSON", map[string]any{"k": "v"}, `{"k":"v"}`, nil},
	}
	for _, tc := range cases {
		text, got, err := candidateOutput(tc.in)
		if err != nil || text != tc.text || !reflect.DeepEqual(got, tc.calls) {
			t.Errorf("%s: %q %+v %v; want %q %+v", tc.name, text, got, err, tc.text, tc.calls)
		}
	}
}

func FuzzPromptfooJudge(f *testing.F) {
	for _, p := range []string{filepath.Join(configBatteries, "promptfoo_judge.yaml"), filepath.Join(configBatteries, "promptfoo.yaml")} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("tests:\n  - vars: {expected_verdict: [PASS, FAIL], output: [a, b], question: q}\n"))
	f.Add([]byte("providers: echo\nprompts: ['{{x}}']\ntests:\n  - vars: {expect: fail, input: q, x: '[{\"name\": 1}]'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "j.yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tests, err := config.LoadJudgeBattery(p)
		if err != nil {
			return
		}
		if len(tests) > 0 && !isPromptfooJudgeBattery(data) {
			t.Errorf("%d judge tests loaded, yet the file is not told a judge battery", len(tests))
		}
		for _, jt := range tests {
			if jt.ID == "" || (jt.Expect != scoring.Pass && jt.Expect != scoring.Fail) {
				t.Errorf("judge test %+v", jt)
			}
		}
	})
}
