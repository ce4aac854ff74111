package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
)

const exampleJudgeBattery = "../examples/judge-battery.toml"

func TestTheExampleJudgeBatteryLoads(t *testing.T) {
	t.Parallel()
	tests, err := LoadJudgeBattery(exampleJudgeBattery)
	if err != nil {
		t.Fatal(err)
	}
	count := map[scoring.Verdict]int{}
	byID := map[string]JudgeTest{}
	for _, jt := range tests {
		count[jt.Expect]++
		byID[jt.ID] = jt
	}
	if len(tests) != 24 || count[scoring.Pass] != 9 || count[scoring.Fail] != 15 {
		t.Errorf("%d tests, %d pass and %d fail; want 24, 9 and 15", len(tests), count[scoring.Pass], count[scoring.Fail])
	}
	right := byID["tool-right"]
	if want := []chat.ToolCall{{Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}; len(right.CandidateToolCalls) != 1 || right.CandidateToolCalls[0] != want[0] {
		t.Errorf("a table's arguments = %+v, want them as JSON %+v", right.CandidateToolCalls, want)
	}
	if right.Candidate != "" || right.User == "" || len(right.Tools) != 1 || right.Source != fmt.Sprintf("%s:%d", exampleJudgeBattery, lineOf(t, exampleJudgeBattery, "[[tests]]", 1)) {
		t.Errorf("tool-right = %+v", right)
	}
	if got := byID["tool-malformed-arguments"].CandidateToolCalls[0].Arguments; got != `{"city": "Tokyo"` {
		t.Errorf("string arguments = %q, want them kept as written, malformed", got)
	}
	if got := byID["attack-unicode-look-alikes"].Candidate; !strings.HasPrefix(got, "\uFF36\uFF25") {
		t.Errorf("the candidate's escapes were not read: %q", got)
	}
}

func writeJudgeBattery(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJudgeBatteriesInJSON(t *testing.T) {
	t.Parallel()
	const test = `{"id": "t1", "user": "2+2?", "candidate": "4", "expect": "PASS",
	  "candidate_tool_calls": [{"name": "calc", "arguments": {"x": 2}}]}`
	for _, tc := range []struct{ name, body string }{
		{"object", `{"name": "j", "tests": [` + test + `]}`},
		{"bare array", `[` + test + `]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeJudgeBattery(t, "judge.json", tc.body)
			tests, err := LoadJudgeBattery(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(tests) != 1 || tests[0].Expect != scoring.Pass || tests[0].Candidate != "4" ||
				tests[0].CandidateToolCalls[0].Arguments != `{"x":2}` || tests[0].Source != p+":1" {
				t.Errorf("got %+v", tests)
			}
		})
	}
	p := writeJudgeBattery(t, "judge.json", "[\n"+`{"id": "t1", "user": "q", "candidate": "a", "expect": "maybe", "expectd": 1}`+"\n]")
	_, err := LoadJudgeBattery(p)
	wantErr(t, err, p, 2, "tests[0].expect", "expect must be pass or fail", `"maybe"`)
	wantErr(t, err, p, 2, "tests[0].expectd", "unknown key", "did you mean `expect`?")
}

func TestJudgeBatteryErrorsNameFileLineAndField(t *testing.T) {
	t.Parallel()
	body := `[[tests]]
id = "no-expect"
user = "q"
candidate = "a"

[[tests]]
id = "bad-expect"
user = "q"
candidate = "a"
expect = "passs"

[[tests]]
id = "no-candidate"
user = "q"
expect = "fail"

[[tests]]
id = "bad-calls"
user = "q"
expect = "fail"
candidate_tool_calls = [{ arguments = 3 }]

[[tests]]
id = "typo"
user = "q"
candidat = "a"
expect = "pass"

[[tests]]
id = "checks"
user = "q"
candidate = "a"
expect = "pass"
checks = [{ type = "contains", value = "a" }]

[[tests]]
id = "no-prompt"
candidate = 7
expect = "pass"
`
	p := writeJudgeBattery(t, "judge.toml", body)
	_, err := LoadJudgeBattery(p)
	at := func(id string) int { return lineOf(t, p, `id = "`+id+`"`, 1) - 1 } // the [[tests]] line
	wantErr(t, err, p, at("no-expect"), "tests[0]", `test "no-expect" has no expect`, `expect = "pass"`)
	wantErr(t, err, p, lineOf(t, p, `expect = "passs"`, 1), "tests[1].expect", "expect must be pass or fail", "did you mean `pass`?")
	wantErr(t, err, p, at("no-candidate"), "tests[2]", "has no candidate output", "candidate_tool_calls")
	wantErr(t, err, p, lineOf(t, p, "arguments = 3", 1), "tests[3].candidate_tool_calls[0].name", "has no name")
	wantErr(t, err, p, lineOf(t, p, "arguments = 3", 1), "tests[3].candidate_tool_calls[0].arguments", "must be a table or a string")
	wantErr(t, err, p, lineOf(t, p, "candidat = ", 1), "tests[4].candidat", "unknown key", "did you mean `candidate`?")
	wantErr(t, err, p, lineOf(t, p, "checks = ", 1), "tests[5].checks", "no place in a judge battery")
	wantErr(t, err, p, lineOf(t, p, "candidate = 7", 1), "tests[6].candidate", "must be a string")
}

func TestJudgeBatteryNeedsAKnownFormat(t *testing.T) {
	t.Parallel()
	p := writeJudgeBattery(t, "judge.csv", "id,expect\na,pass\n")
	_, err := LoadJudgeBattery(p)
	wantErr(t, err, p, 0, "", `unknown judge battery format ".csv"`, "a promptfoo config (.yaml)")
}

func TestLoadQualify(t *testing.T) {
	t.Parallel()
	const example = "../examples/judge-qualify.toml"
	c, tests, err := LoadQualify(example, Overrides{}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 24 || len(c.Tests) != 0 || len(c.Models) != 0 {
		t.Errorf("%d judge tests, %d tests, %d models; want 24, 0, 0", len(tests), len(c.Tests), len(c.Models))
	}
	if got := strings.Join(c.JudgeNames(), ","); got != "exact,good,noisy" || c.Scoring.Samples != 3 {
		t.Errorf("judges %s samples %d, want the jury's three and 3 samples", got, c.Scoring.Samples)
	}

	c, tests, err = LoadQualify(example, Overrides{Judge: "good", JudgeSamples: 7, Tests: "attack-*"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.JudgeNames(), ","); got != "good" || c.Scoring.Samples != 7 || len(tests) != 9 {
		t.Errorf("--judge good --judge-samples 7 --tests attack-*: judges %s samples %d tests %d; want good, 7, 9",
			got, c.Scoring.Samples, len(tests))
	}
	for _, jt := range tests {
		if !strings.HasPrefix(jt.ID, "attack-") {
			t.Errorf("--tests attack-* kept %s", jt.ID)
		}
	}

	_, _, err = LoadQualify(example, Overrides{Judge: "none"}, noEnv)
	wantErr(t, err, example, lineOf(t, example, "[scoring]", 2), "scoring.judges", "no judge to qualify") // the first mention is a comment

	// A battery that is not a judge battery says what each test lacks.
	p := writeConfig(t, `battery = "tools.toml"
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
	_, _, err = LoadQualify(p, Overrides{}, noEnv)
	if err == nil || !strings.Contains(err.Error(), "has no expect") || !strings.Contains(err.Error(), "no place in a judge battery") {
		t.Errorf("a plain battery as a judge battery: %v", err)
	}
}

func TestIsQualifyConfig(t *testing.T) {
	t.Parallel()
	plain := writeConfig(t, `battery = "tools.toml"`)
	judgeJSON := filepath.Join(t.TempDir(), "q.toml")
	if err := os.WriteFile(judgeJSON, []byte(`battery = "j.json"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(judgeJSON), "j.json"), []byte(`[{"id": "a", "expect": "pass"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"../examples/judge-qualify.toml", true},
		{judgeJSON, true},
		{"../examples/demo.toml", false},
		{plain, false},
		{filepath.Join(t.TempDir(), "missing.toml"), false},
	} {
		if got := IsQualifyConfig(tc.path); got != tc.want {
			t.Errorf("IsQualifyConfig(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
