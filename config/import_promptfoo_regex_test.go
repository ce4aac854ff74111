package config

import (
	"encoding/json"
	"testing"

	"pitwall/judge/check"
)

// TestPromptfooRegexRunsAsJavaScriptWhereRE2Cannot: promptfoo runs a regex
// assertion as a JavaScript RegExp. A pattern RE2 cannot read but
// JavaScript can, whatever RE2's reason, runs as JavaScript; one RE2 reads
// stays a regex check; one neither reads is an error naming the test.
func TestPromptfooRegexRunsAsJavaScriptWhereRE2Cannot(t *testing.T) {
	cases := []struct {
		id, pattern string
		typ         string // the check it becomes
		pass, bad   string
	}{
		// RE2 calls (?<= and (?<! an invalid named capture.
		{"lookbehind", `(?<=\$)\d+`, "javascript", "costs $42", "costs 42"},
		{"negative-lookbehind", `(?<!un)happy`, "javascript", "happy days", "unhappy days"},
		{"not-lookbehind", `(?<=\$)\d+`, "not-javascript", "costs 42", "costs $42"},
		{"backreference", `\b(\w+) \1\b`, "javascript", "it is is late", "it is late"},
		{"named-backreference", `(?<w>\w+) \k<w>`, "javascript", "very very", "very much"},
		{"lookahead", `Paris(?= France)`, "javascript", "Paris France", "Paris Texas"},
		{"re2", `^\d{4}-\d{2}$`, "regex", "2024-05", "May 2024"},
	}
	body := "prompts: [\"{{q}}\"]\ntests:\n"
	for _, tt := range cases {
		typ := "regex"
		if tt.typ == "not-javascript" {
			typ = "not-regex"
		}
		body += "  - metadata: {test_id: " + tt.id + "}\n    vars: {q: x}\n    assert: [{type: " + typ + ", value: " + jsonString(tt.pattern) + "}]\n"
	}
	p := writeFile(t, t.TempDir(), "pf.yaml", body)
	tests, _, err := loadBattery(p)
	if err != nil {
		t.Fatal(err)
	}
	m := byID(tests)
	for _, tt := range cases {
		t.Run(tt.id, func(t *testing.T) {
			checks := m[tt.id].Checks
			if len(checks) != 1 || checks[0].Type != tt.typ {
				t.Fatalf("checks %+v, want one %s check", checks, tt.typ)
			}
			if res := check.RunChecks(checks, check.Output{Content: tt.pass}); !check.Passed(res) {
				t.Errorf("%q fails on %q: %+v", tt.pattern, tt.pass, res)
			}
			if res := check.RunChecks(checks, check.Output{Content: tt.bad}); check.Passed(res) {
				t.Errorf("%q passes on %q: %+v", tt.pattern, tt.bad, res)
			}
		})
	}
}

func TestPromptfooRegexNeitherReadsIsAnError(t *testing.T) {
	for _, pattern := range []string{
		`(?<=\$\d+`, // a lookbehind left open
		`[z-a]`,     // a range out of order
		`a{2,1}`,    // a repeat count out of order
	} {
		t.Run(pattern, func(t *testing.T) {
			body := "prompts: [\"{{q}}\"]\ntests:\n  - metadata: {test_id: bad}\n    vars: {q: x}\n    assert:\n      - type: regex\n        value: " + jsonString(pattern) + "\n"
			p := writeFile(t, t.TempDir(), "pf.yaml", body)
			_, err := LoadBattery(p)
			wantErr(t, err, p, 6, "tests[0].assert[0]", `test "bad"`, "bad regex")
		})
	}
}

// jsonString writes s as a JSON string, which YAML and JavaScript read alike.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
