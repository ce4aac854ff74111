package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
)

func judgeByID(tests []JudgeTest) map[string]JudgeTest {
	m := map[string]JudgeTest{}
	for _, t := range tests {
		m[t.ID] = t
	}
	return m
}

func TestPromptfooJudgeBatteryLoadsAsAJudgeBattery(t *testing.T) {
	p := filepath.Join("testdata", "batteries", "promptfoo_judge.yaml")
	tests, warnings, err := loadJudgeBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, jt := range tests {
		ids = append(ids, jt.ID)
	}
	want := []string{"tool-right", "tool-wrong-argument", "tool-wrong-tool", "tool-no-call", "tool-empty-list",
		"tool-with-text", "capital-of-france", "capital-wrong", "refusal"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v (PARTIAL left out)", ids, want)
	}
	m := judgeByID(tests)
	call := func(id, name, args string) []chat.ToolCall {
		return []chat.ToolCall{{ID: id, Name: name, Arguments: args}}
	}
	cases := []struct {
		id        string
		expect    scoring.Verdict
		candidate string
		calls     []chat.ToolCall
	}{
		{"tool-right", scoring.Pass, "", call("call_1", "get_weather", `{"city": "Tokyo"}`)},
		{"tool-wrong-argument", scoring.Fail, "", call("call_1", "get_weather", `{"city": "Kyoto"}`)},
		{"tool-wrong-tool", scoring.Fail, "", call("call_1", "read_file", `{"path": "tokyo.txt"}`)},
		{"tool-no-call", scoring.Fail, "I'd be happy to help you check the weather in Tokyo, but I have no real-time data.", nil},
		{"tool-empty-list", scoring.Fail, "", []chat.ToolCall{}},
		{"tool-with-text", scoring.Pass, "Let me check.", call("", "get_weather", `{"city":"Tokyo"}`)},
		{"capital-of-france", scoring.Pass, "The capital of France is Paris.", nil},
		{"capital-wrong", scoring.Fail, "The capital of France is Lyon.", nil},
		{"refusal", scoring.Fail, "I'm sorry, but I can't help with that.", nil},
	}
	for _, tc := range cases {
		jt := m[tc.id]
		if jt.Expect != tc.expect || jt.Candidate != tc.candidate || !reflect.DeepEqual(jt.CandidateToolCalls, tc.calls) {
			t.Errorf("%s: expect %q candidate %q calls %+v; want %q %q %+v", tc.id, jt.Expect, jt.Candidate, jt.CandidateToolCalls,
				tc.expect, tc.candidate, tc.calls)
		}
	}
	r := m["tool-right"]
	if r.User != "What's the weather in Tokyo?" || r.Criteria != "Calls get_weather with city Tokyo." ||
		r.Reference != `[tool call] get_weather({"city":"Tokyo"})` || r.Category != "tools" || r.Name != "Clear pass, exact call" ||
		len(r.Tools) != 1 || r.Tools[0].Function.Name != "get_weather" || len(r.Checks) != 0 {
		t.Errorf("tool-right: %+v", r)
	}
	if c := m["capital-of-france"]; c.User != "What is the capital of France?" || c.Criteria != "Names Paris." || c.Reference != "Paris" {
		t.Errorf("capital-of-france: user %q criteria %q reference %q", c.User, c.Criteria, c.Reference)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"a test expecting PARTIAL is left out", "partial-one-of-two", "assertions are not read"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestPromptfooJudgeBatteryErrorsNameTheTestAndTheField(t *testing.T) {
	dir := t.TempDir()
	body := `prompts: ["{{output}}"]
tests:
  - description: fine
    vars: {expected_verdict: pass, question: q, output: a}
  - description: Judge tool wrong
    vars:
      expected_verdict: maybe
      question: q
      output: a
  - metadata: {test_id: no-output}
    vars: {expected_verdict: FAIL, question: q}
  - metadata: {test_id: no-verdict}
    vars: {question: q, output: a}
  - metadata: {test_id: no-task}
    vars: {expected_verdict: FAIL, output: a}
  - metadata: {test_id: bad-calls}
    vars:
      expected_verdict: FAIL
      question: q
      output: '{"tool_calls": [{"nothing": 1}]}'
`
	p := writeFile(t, dir, "x.yaml", body)
	_, err := LoadJudgeBattery(p)
	wantErr(t, err, p, 7, "tests[1].vars.expected_verdict",
		`test 2 (judge-tool-wrong): vars.expected_verdict is "maybe": want pass or fail`)
	wantErr(t, err, p, 11, "tests[2].vars", "test 3 (no-output) has no fixed output to judge", "add vars.output")
	wantErr(t, err, p, 12, "tests[3]", "test 4 (no-verdict) has no expected verdict", "vars.expected_verdict")
	wantErr(t, err, p, 15, "tests[4].vars", "test 5 (no-task) does not say what the candidate was asked", "vars.task_description")
	wantErr(t, err, p, 20, "tests[5].vars.output", "test 6 (bad-calls): vars.output: tool_calls holds something that is not a tool call")
	if n := strings.Count(err.Error(), "\n") + 1; n != 5 {
		t.Errorf("%d errors, want 5:\n%v", n, err)
	}
}

// The echo provider answers with the prompt: the rendered prompt is the
// output to grade, one test per prompt.
func TestPromptfooJudgeBatteryReadsEchoOutputs(t *testing.T) {
	dir := t.TempDir()
	body := `prompts:
  - "The answer is {{answer}}."
  - id: shout
    raw: "THE ANSWER IS {{answer}}!"
providers: [echo]
tests:
  - vars: {test_id: sum, expected_verdict: PASS, question: "2 + 2?", answer: "4"}
`
	tests, _, err := loadJudgeBattery(writeFile(t, dir, "echo.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 2 || tests[0].ID != "sum/p1" || tests[0].Candidate != "The answer is 4." ||
		tests[1].ID != "sum/shout" || tests[1].Candidate != "THE ANSWER IS 4!" || tests[1].User != "2 + 2?" {
		t.Fatalf("echo tests: %+v", tests)
	}
}

// A promptfoo judge-competence config qualifies judges when the config
// that names it lists no models; with models, it is a battery to run.
func TestIsQualifyConfigReadsPromptfooJudgeBatteries(t *testing.T) {
	dir := t.TempDir()
	judge, err := os.ReadFile(filepath.Join("testdata", "batteries", "promptfoo_judge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "judge.yaml", string(judge))
	writeFile(t, dir, "plain.yaml", "prompts: ['{{q}}']\ntests:\n  - vars: {q: hi, expected_verdict: PASS}\n")
	for _, tc := range []struct {
		config string
		want   bool
	}{
		{`battery = "judge.yaml"`, true},
		{"battery = \"judge.yaml\"\nmodels = [\"m\"]", false},
		{`battery = "plain.yaml"`, false}, // a verdict but nothing to grade: the models under test answer
	} {
		p := writeFile(t, dir, "pitwall.toml", tc.config)
		if got := IsQualifyConfig(p); got != tc.want {
			t.Errorf("IsQualifyConfig(%q) = %v, want %v", tc.config, got, tc.want)
		}
	}

	p := writeFile(t, dir, "pitwall.toml", `battery = "judge.yaml"
[[servers]]
name = "s"
kind = "sim"
models = ["j"]
[scoring]
mode = "judge"
[[scoring.judges]]
name = "j"
model = "j"
server = "s"
`)
	c, tests, err := LoadQualify(p, Overrides{Tests: "tool-*"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 6 || !strings.Contains(strings.Join(c.Warnings, "\n"), "PARTIAL is left out") {
		t.Errorf("LoadQualify --tests tool-*: %d tests (want 6), warnings %v", len(tests), c.Warnings)
	}
}

// prompt-prix's own judge-competence file, where the shared batteries
// hold it.
func TestImportPromptPrixJudgeCompetence(t *testing.T) {
	file := sharedBattery(t, "judge_competence_tests.promptfoo.yaml")
	if _, err := os.Stat(file); err != nil {
		t.Skipf("%s is not among the shared batteries (prompt-prix's examples/judge_competence_tests.promptfoo.yaml); testdata/batteries/promptfoo_judge.yaml has its shapes", file)
	}
	tests, warnings, err := loadJudgeBattery(file)
	if err != nil {
		t.Fatal(err)
	}
	m := judgeByID(tests)
	if len(tests) < 25 {
		t.Errorf("%d judge tests", len(tests))
	}
	for _, jt := range tests {
		if jt.User == "" || jt.Criteria == "" || (jt.Expect != scoring.Pass && jt.Expect != scoring.Fail) {
			t.Errorf("%s: user %q criteria %q expect %q", jt.ID, jt.User, jt.Criteria, jt.Expect)
		}
	}
	for _, id := range []string{"partial_one_of_two", "reasoning_weak_justification"} {
		if _, ok := m[id]; ok {
			t.Errorf("%s expects PARTIAL, yet is a judge test", id)
		}
	}
	if !strings.Contains(strings.Join(warnings, "\n"), "PARTIAL is left out") {
		t.Errorf("warnings %v do not say PARTIAL tests are left out", warnings)
	}
	checks := []struct {
		id        string
		expect    scoring.Verdict
		candidate string
		calls     []chat.ToolCall
	}{
		{"clear_pass_exact", scoring.Pass, "", []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Tokyo"}`}}},
		{"edge_malformed_json", scoring.Fail, "", []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: "{city: Tokyo}"}}},
		{"edge_null_args", scoring.Fail, "", []chat.ToolCall{{ID: "call_1", Name: "get_weather"}}},
		{"edge_empty_array", scoring.Fail, "", []chat.ToolCall{}},
	}
	for _, tc := range checks {
		jt, ok := m[tc.id]
		if !ok || jt.Expect != tc.expect || jt.Candidate != tc.candidate || !reflect.DeepEqual(jt.CandidateToolCalls, tc.calls) {
			t.Errorf("%s: %+v", tc.id, jt)
		}
	}
	if jt := m["clear_fail_no_call"]; !strings.HasPrefix(jt.Candidate, "I'd be happy to help") || len(jt.CandidateToolCalls) != 0 {
		t.Errorf("clear_fail_no_call: candidate %q calls %v; want the reply text, unquoted", jt.Candidate, jt.CandidateToolCalls)
	}
	if n := len(m["gaming_extra_calls"].CandidateToolCalls); n != 3 {
		t.Errorf("gaming_extra_calls: %d calls, want 3", n)
	}
}
