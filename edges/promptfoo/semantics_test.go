package promptfoo

import (
	"os"
	"path/filepath"
	"strings"
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

// TestPromptfooTransformsRunBeforeTheAssertions pins what a test's
// options.transform (and defaultTest's, and an assertion's own transform)
// does in promptfoo: the assertions read what it returned, and one that
// throws errors the test, so that none of its assertions passes.
func TestPromptfooTransformsRunBeforeTheAssertions(t *testing.T) {
	calls := []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	cases := []struct {
		name string
		yaml string // the test's keys after vars and metadata
		def  string // defaultTest, when any
		out  check.Output
		pass bool
	}{
		{"the assertion reads the transformed text",
			"options: {transform: output.toUpperCase()}\n    assert: [{type: equals, value: PARIS}]", "", check.Output{Content: "Paris"}, true},
		{"and no longer the reply",
			"options: {transform: output.toUpperCase()}\n    assert: [{type: equals, value: Paris}]", "", check.Output{Content: "Paris"}, false},
		{"postprocess is transform's older name",
			"options: {postprocess: output.trim()}\n    assert: [{type: equals, value: Paris}]", "", check.Output{Content: "  Paris \n"}, true},
		{"defaultTest's transform applies",
			"assert: [{type: equals, value: Paris}]", "defaultTest: {options: {transform: output.trim()}}\n", check.Output{Content: " Paris "}, true},
		{"the test's transform wins over defaultTest's",
			"options: {transform: output.trim()}\n    assert: [{type: equals, value: Paris}]", "defaultTest: {options: {transform: \"'x'\"}}\n", check.Output{Content: " Paris "}, true},
		{"an object is read as its JSON",
			"options: {transform: \"({city: output.trim(), n: 1})\"}\n    assert: [{type: equals, value: '{\"city\":\"Paris\",\"n\":1}'}]", "", check.Output{Content: "Paris "}, true},
		{"javascript gets the value itself",
			"options: {transform: \"({city: output})\"}\n    assert: [{type: javascript, value: output.city === 'Paris'}]", "", check.Output{Content: "Paris"}, true},
		{"tool calls reach the transform as promptfoo passes them",
			"options: {transform: 'output[0].function.name'}\n    assert: [{type: equals, value: get_weather}]", "", check.Output{ToolCalls: calls}, true},
		{"a body of several lines returns its value",
			"options:\n      transform: |\n        const s = output.split(' ');\n        return s[s.length - 1];\n    assert: [{type: equals, value: Paris}]", "", check.Output{Content: "It is Paris"}, true},
		{"the test's transform runs before the assertion's",
			"options: {transform: output.trim()}\n    assert: [{type: equals, value: PARIS!, transform: \"output.toUpperCase() + '!'\"}]", "", check.Output{Content: " Paris "}, true},
		{"an assertion's transform is its own",
			"assert: [{type: equals, value: paris, transform: output.toLowerCase()}, {type: equals, value: Paris}]", "", check.Output{Content: "Paris"}, true},
		{"a transform that throws errors the test",
			"options: {transform: output.nope.deeper}\n    assert: [{type: not-equals, value: x}]", "", check.Output{Content: "Paris"}, false},
		{"a transform that returns nothing errors the test",
			"options: {transform: 'null'}\n    assert: [{type: not-equals, value: x}]", "", check.Output{Content: "Paris"}, false},
		{"a transform that does not compile errors the test",
			"options: {transform: 'output +'}\n    assert: [{type: not-contains, value: x}]", "", check.Output{Content: "Paris"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "pf.yaml")
			body := "prompts: [\"{{q}}\"]\n" + tc.def + "tests:\n  - vars: {q: x}\n    metadata: {test_id: a}\n    " + tc.yaml + "\n"
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			tests, err := config.LoadBattery(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(tests) != 1 {
				t.Fatalf("got %d tests, want 1", len(tests))
			}
			res := check.RunChecks(tests[0].Checks, tc.out)
			if got := check.Passed(res); got != tc.pass {
				t.Errorf("pass = %v, want %v: %+v", got, tc.pass, res)
			}
			if !tc.pass && strings.Contains(tc.name, "errors the test") {
				for _, r := range res {
					if !strings.Contains(r.Reason, "transform failed") {
						t.Errorf("result %q does not name the transform: %q", r.Name, r.Reason)
					}
				}
			}
		})
	}
}

// An is-refusal test passes on a refusal, and a test that expects the empty
// reply on one: the validation every reply gets steps aside for them, as
// promptfoo has no such validation.
func TestPromptfooTestsThatWantARefusalOrNothingCanPass(t *testing.T) {
	cases := []struct {
		name, assert string
		out          check.Output
		pass         bool
	}{
		{"a refusal passes is-refusal", `{type: is-refusal}`, check.Output{Content: "I'm sorry, but I can't help with that."}, true},
		{"an empty reply passes is-refusal", `{type: is-refusal}`, check.Output{}, true},
		{"an answer fails is-refusal", `{type: is-refusal}`, check.Output{Content: "Paris."}, false},
		{"an empty reply passes equals \"\"", `{type: equals, value: ""}`, check.Output{}, true},
		{"an empty reply still fails contains", `{type: not-contains, value: x}`, check.Output{}, false},
		{"a refusal still fails not-is-refusal", `{type: not-is-refusal}`, check.Output{Content: "I'm sorry, but I can't help with that."}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "pf.yaml")
			body := "prompts: [\"{{q}}\"]\ntests:\n  - vars: {q: x}\n    metadata: {test_id: a}\n    assert: [" + tc.assert + "]\n"
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			tests, err := config.LoadBattery(p)
			if err != nil {
				t.Fatal(err)
			}
			res, ok := tests[0].Judge(tc.out)
			if ok != tc.pass {
				t.Errorf("pass = %v, want %v: %+v", ok, tc.pass, res)
			}
		})
	}
}
