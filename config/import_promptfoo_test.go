package config

import (
	"reflect"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// One test per assertion type pitwall maps, each with a reply that passes
// and one that fails.
const pfAssertions = `
prompts: ["{{q}}"]
providers:
  - id: openai:chat:gpt-4o
    config:
      temperature: 0
      tools:
        - type: function
          function:
            name: get_weather
            parameters: {type: object, properties: {city: {type: string}}, required: [city]}
tests:
  - metadata: {test_id: equals}
    vars: {q: "Say Paris"}
    assert: [{type: equals, value: Paris}]
  - metadata: {test_id: equals-json}
    vars: {q: "JSON"}
    assert: [{type: equals, value: {city: Paris}}]
  - metadata: {test_id: contains}
    vars: {q: "Say {{city}}", city: Paris}
    assert: [{type: contains, value: "{{city}}"}]
  - metadata: {test_id: not-icontains}
    vars: {q: "x"}
    assert: [{type: not-icontains, value: SORRY}]
  - metadata: {test_id: starts-with}
    vars: {q: "x"}
    assert: [{type: starts-with, value: "Yes"}]
  - metadata: {test_id: regex}
    vars: {q: "x"}
    assert: [{type: regex, value: "\\d{4}"}]
  - metadata: {test_id: regex-lookahead}
    vars: {q: "x"}
    assert: [{type: regex, value: "Paris(?= France)"}]
  - metadata: {test_id: contains-any}
    vars: {q: "x"}
    assert: [{type: contains-any, value: "Rome, Paris"}]
  - metadata: {test_id: icontains-all}
    vars: {q: "x"}
    assert: [{type: icontains-all, value: [paris, france]}]
  - metadata: {test_id: not-contains-all}
    vars: {q: "x"}
    assert: [{type: not-contains-all, value: [Paris, Rome]}]
  - metadata: {test_id: is-json}
    vars: {q: "x"}
    assert: [{type: is-json}]
  - metadata: {test_id: is-json-schema}
    vars: {q: "x"}
    assert: [{type: is-json, value: {type: object, required: [city]}}]
  - metadata: {test_id: contains-json}
    vars: {q: "x"}
    assert: [{type: contains-json}]
  - metadata: {test_id: levenshtein}
    vars: {q: "x"}
    assert: [{type: levenshtein, value: "Paris, France", threshold: 2}]
  - metadata: {test_id: latency}
    vars: {q: "x"}
    assert: [{type: latency, threshold: 1500}]
  - metadata: {test_id: tools-call}
    vars: {q: "Weather in Tokyo?"}
    assert: [{type: is-valid-openai-tools-call}]
  - metadata: {test_id: is-refusal}
    vars: {q: "x"}
    assert: [{type: is-refusal}]
  - metadata: {test_id: not-is-refusal}
    vars: {q: "x"}
    assert: [{type: not-is-refusal}]
  - metadata: {test_id: js-number}
    vars: {q: "x"}
    assert: [{type: javascript, value: "output.length / 10", threshold: 0.5}]
  - metadata: {test_id: js-object}
    vars: {q: "x", want: Paris}
    assert:
      - type: javascript
        value: |
          const ok = output.includes(context.vars.want);
          return {pass: ok, score: ok ? 1 : 0, reason: ok ? 'found' : 'missing ' + context.vars.want};
  - metadata: {test_id: js-file}
    vars: {q: "x"}
    assert: [{type: javascript, value: "file://checks/len.js"}]
  - metadata: {test_id: js-file-named}
    vars: {q: "x"}
    assert: [{type: javascript, value: "file://checks/len.js:short"}]
  - metadata: {test_id: assert-set}
    vars: {q: "x"}
    assert:
      - type: assert-set
        assert: [{type: contains, value: Paris}, {type: contains, value: France}]
`

const lenScript = `// Passes replies of 5 to 30 characters.
module.exports = (output, context) => output.length >= 5 && output.length <= 30;
module.exports.short = (output) => ({pass: output.length < 10, score: 1, reason: 'length ' + output.length});
`

func TestPromptfooAssertionsMapToChecks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "checks/len.js", lenScript)
	p := writeFile(t, dir, "pf.yaml", pfAssertions)
	tests, warnings, err := loadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	m := byID(tests)
	text := func(s string) check.Output { return check.Output{Content: s} }
	weather := check.Output{ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: `{"city": "Tokyo"}`}}}
	cases := []struct {
		id        string
		types     []string
		pass, bad check.Output
	}{
		{"equals", []string{"equals"}, text("Paris"), text("Paris!")},
		{"equals-json", []string{"json-schema"}, text(`{"city": "Paris"}`), text(`{"city": "Rome"}`)},
		{"contains", []string{"contains"}, text("It is Paris"), text("It is Rome")},
		{"not-icontains", []string{"not-icontains"}, text("Paris"), text("Sorry, no.")},
		{"starts-with", []string{"starts-with"}, text("Yes, it is."), text("No.")},
		{"regex", []string{"regex"}, text("In 1969."), text("Long ago.")},
		{"regex-lookahead", []string{"javascript"}, text("Paris France"), text("Paris Texas")},
		{"contains-any", []string{"contains-any"}, text("Paris"), text("Oslo")},
		{"icontains-all", []string{"icontains-all"}, text("PARIS, France"), text("Paris")},
		{"not-contains-all", []string{"not-contains-all"}, text("Paris"), text("Paris and Rome")},
		{"is-json", []string{"is-json"}, text(`[1]`), text("one")},
		{"is-json-schema", []string{"json-schema"}, text(`{"city": "Paris"}`), text(`{"town": "Paris"}`)},
		{"contains-json", []string{"contains-json"}, text(`Here: {"a": 1}`), text("none")},
		{"levenshtein", []string{"levenshtein"}, text("Paris France"), text("Lyon, France")},
		{"latency", []string{"max-latency"}, check.Output{Content: "x", Latency: 1000 * 1e6}, check.Output{Content: "x", Latency: 2000 * 1e6}},
		{"tools-call", []string{"valid-tool-calls"}, weather, check.Output{ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: `{"town": "Tokyo"}`}}}},
		{"is-refusal", []string{"not-not-refusal"}, text("I can't help with that."), text("Paris.")},
		{"not-is-refusal", []string{"not-refusal"}, text("Paris."), text("I can't help with that.")},
		{"js-number", []string{"javascript"}, text("abcdefgh"), text("abc")},
		{"js-object", []string{"javascript"}, text("Paris"), text("Rome")},
		{"js-file", []string{"javascript"}, text("Paris, France"), text("Pari")},
		{"js-file-named", []string{"javascript"}, text("Paris"), text("Paris, France")},
		{"assert-set", []string{"contains", "contains"}, text("Paris, France"), text("Paris")},
	}
	for _, tt := range cases {
		t.Run(tt.id, func(t *testing.T) {
			test, ok := m[tt.id]
			if !ok {
				t.Fatalf("no test %q among %v", tt.id, testIDs(tests))
			}
			var types []string
			for _, c := range test.Checks {
				types = append(types, c.Type)
			}
			if !reflect.DeepEqual(types, tt.types) {
				t.Fatalf("check types = %v, want %v", types, tt.types)
			}
			if res := check.RunChecks(test.Checks, tt.pass); !check.Passed(res) {
				t.Errorf("the passing reply fails: %+v", res)
			}
			if res := check.RunChecks(test.Checks, tt.bad); check.Passed(res) {
				t.Errorf("the failing reply passes: %+v", res)
			}
		})
	}
	if got := m["contains"].Checks[0].Value; got != "Paris" {
		t.Errorf("value not rendered with the vars: %q", got)
	}
	if js := m["js-file"].Checks[0]; js.Args["file"] != "checks/len.js" || js.Args["module"] != true {
		t.Errorf("file script args = %v", js.Args)
	}
	if tools := m["equals"].Tools; len(tools) != 1 || tools[0].Function.Name != "get_weather" {
		t.Errorf("the provider's tools are not the test's: %+v", tools)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{`1× provider config "temperature" is not applied`, "1× providers are not run"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

const pfJudgeBattery = `
description: judge competence
prompts:
  - file://judge_prompt.txt
defaultTest:
  options:
    provider:
      config:
        response_format: {type: json_object}
tests:
  - description: Wrong sum
    vars:
      answer: "2 + 2 = 5"
      expected_verdict: FAIL
      expected_response: '{"verdict": "FAIL"}'
    metadata: {test_id: wrong-sum, severity: critical}
  - description: Right sum
    vars:
      answer: ["2 + 2 = 4", "two plus two is four"]
      expected_verdict: PASS
    assert:
      - type: python
        value: "True"
      - type: similar
        value: "correct"
      - type: contains
        value: "verdict"
        weight: 0
    options:
      transform: output.trim()
    threshold: 0.5
    unknown_key: 1
`

func TestPromptfooJudgeBatteryKeepsItsGroundTruth(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "judge_prompt.txt", "Grade this answer and reply in JSON {\"verdict\": ...}: {{answer}}\n")
	p := writeFile(t, dir, "judge.yaml", pfJudgeBattery)
	tests, warnings, err := loadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	if ids := testIDs(tests); !reflect.DeepEqual(ids, []string{"wrong-sum", "right-sum#1", "right-sum#2"}) {
		t.Fatalf("ids = %v", ids)
	}
	w := tests[0]
	// defaultTest's options.provider is promptfoo's grader: its
	// response_format is not sent to the model under test, as in promptfoo.
	if w.Expect != "FAIL" || w.Severity != "critical" || w.Reference != `{"verdict": "FAIL"}` || w.ResponseFormat != nil {
		t.Errorf("test = %+v", w)
	}
	if w.User != "Grade this answer and reply in JSON {\"verdict\": ...}: 2 + 2 = 5" {
		t.Errorf("prompt from the file, rendered = %q", w.User)
	}
	if len(w.Checks) != 1 || w.Checks[0].Type != "verdict" || w.Checks[0].Value != "FAIL" {
		t.Errorf("checks = %+v", w.Checks)
	}
	if res := check.RunChecks(w.Checks, check.Output{Content: `{"verdict": "FAIL", "reason": "5 is wrong"}`}); !check.Passed(res) {
		t.Errorf("the right verdict fails: %+v", res)
	}
	if res := check.RunChecks(w.Checks, check.Output{Content: `{"verdict": "PASS"}`}); check.Passed(res) {
		t.Errorf("the wrong verdict passes: %+v", res)
	}
	if tests[2].User != "Grade this answer and reply in JSON {\"verdict\": ...}: two plus two is four" || tests[2].Expect != "PASS" {
		t.Errorf("list var not expanded: %+v", tests[2])
	}
	want := []string{
		`2× "python" assertion not checked: pitwall runs JavaScript assertions only (in right-sum#1, right-sum#2)`,
		`2× "similar" assertion not checked: pitwall has no equivalent (in right-sum#1, right-sum#2)`,
		`2× "contains" assertion not checked: weight 0 makes it a metric that never fails a test (in right-sum#1, right-sum#2)`,
		`1× promptfoo test key "unknown_key" is not read`,
		`2× a test's threshold (a minimum share of weighted assertions) is not applied: every check must pass (in right-sum#1, right-sum#2)`,
	}
	joined := strings.Join(warnings, "\n")
	// options.transform is applied now (its output.trim() runs before the
	// checks), so it is not among what pitwall leaves undone.
	if strings.Contains(joined, "transform") {
		t.Errorf("a transform pitwall runs is warned about:\n%s", joined)
	}
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestPromptfooErrorsNameTheAssertion(t *testing.T) {
	dir := t.TempDir()
	body := `prompts: ["{{q}}"]
tests:
  - metadata: {test_id: a}
    vars: {q: x}
    assert:
      - type: javascript
        value: "return (;"
      - type: javascript
        value: file://missing.js
      - type: regex
        value: "(unclosed"
`
	p := writeFile(t, dir, "pf.yaml", body)
	_, err := LoadBattery(p)
	// A script that does not compile fails its own assertion, as in
	// promptfoo (TestPromptfooBrokenScriptFailsItsAssertionOnly).
	wantErr(t, err, p, 9, "tests[0].assert[1].value", "file://missing.js: no such file")
	wantErr(t, err, p, 10, "tests[0].assert[2]", `test "a"`, "bad regex")
}
