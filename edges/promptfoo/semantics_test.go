package promptfoo

import (
	"os"
	"path/filepath"
	"testing"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// TestPromptfooAssertionsReadTheReplyAsPromptfooDoes pins the verdicts the
// differential suite (e2e/promptfoo) found promptfoo 0.123.1 gives.
func TestPromptfooAssertionsReadTheReplyAsPromptfooDoes(t *testing.T) {
	calls := []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	cases := []struct {
		name   string
		assert string
		out    check.Output
		pass   bool
	}{
		{"equals does not trim", `{type: equals, value: "Paris"}`, check.Output{Content: "  Paris \n"}, false},
		{"equals the empty reply", `{type: equals, value: ""}`, check.Output{}, true},
		{"starts-with does not trim", `{type: starts-with, value: "Paris"}`, check.Output{Content: " Paris"}, false},
		{"is-json rejects a fence", `{type: is-json}`, check.Output{Content: "```json\n{}\n```"}, false},
		{"is-json reads tool calls as JSON", `{type: is-json}`, check.Output{ToolCalls: calls}, true},
		{"contains reads tool calls as JSON", `{type: contains, value: get_weather}`, check.Output{ToolCalls: calls}, true},
		{"contains-json finds objects, not arrays", `{type: contains-json}`, check.Output{Content: "Items: [1, 2]"}, false},
		{"(?i) is refused as JavaScript refuses it", `{type: regex, value: "(?i)paris"}`, check.Output{Content: "Paris"}, false},
		{"an empty reply is a refusal", `{type: is-refusal}`, check.Output{}, true},
		{"tool calls are a refusal", `{type: is-refusal}`, check.Output{ToolCalls: calls}, true},
		{"javascript gets the raw tool calls", `{type: javascript, value: "Array.isArray(output) && typeof output !== 'string'"}`, check.Output{ToolCalls: calls}, true},
		{"a broken script fails its assertion only", `{type: javascript, value: "return (;"}`, check.Output{Content: "x"}, false},
		{"levenshtein does not trim", `{type: levenshtein, value: "Paris", threshold: 2}`, check.Output{Content: "  Paris \n"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "pf.yaml")
			body := "prompts: [\"{{q}}\"]\ntests:\n  - vars: {q: x}\n    metadata: {test_id: a}\n    assert:\n      - " + tc.assert + "\n"
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			tests, err := config.LoadBattery(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(tests) != 1 || len(tests[0].Checks) != 1 {
				t.Fatalf("got %+v, want one test with one check", tests)
			}
			r := check.RunChecks(tests[0].Checks, tc.out)[0]
			if r.Pass != tc.pass {
				t.Errorf("%s on %+v: pass=%v (%s), want %v", tc.assert, tc.out, r.Pass, r.Reason, tc.pass)
			}
		})
	}
}

// A byte-order mark, which editors on Windows put before UTF-8 text, is not
// part of the config, of a JSON chat prompt, nor of a var file.
func TestPromptfooFilesMayStartWithAByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(bom+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("chat.json", `[{"role": "user", "content": "{{q}}"}]`)
	write("q.json", `"What is 2 + 2?"`)
	p := write("pf.yaml", "prompts: [file://chat.json]\ntests:\n  - vars: {q: file://q.json}\n    metadata: {test_id: sum}\n    assert: [{type: contains, value: \"4\"}]\n")
	tests, err := config.LoadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 1 || len(tests[0].Messages) != 1 || tests[0].Messages[0].Content != "What is 2 + 2?" {
		t.Fatalf("tests = %+v", tests)
	}
}
