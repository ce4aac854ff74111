package promptfoo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/config"
	"pitwall/judge/check"
)

// TestPromptfooRefsResolveWithinTheFile: assertionTemplates named by $ref in
// assert lists (the test's and defaultTest's), keys beside a $ref laid over
// it, a $ref to vars, and a tool schema's own $ref left as written.
func TestPromptfooRefsResolveWithinTheFile(t *testing.T) {
	tests, warnings := loadYAML(t, `assertionTemplates:
  saysParis: {type: contains, value: Paris}
  short: {type: javascript, value: "output.length < 40"}
shared:
  vars: {q: "Capital of France?"}
prompts: ["{{q}}"]
providers:
  - id: openai:chat:x
    config:
      tools:
        - type: function
          function:
            name: f
            parameters: {$ref: "#/definitions/args"}
defaultTest:
  assert:
    - $ref: "#/assertionTemplates/short"
tests:
  - vars: {$ref: "#/shared/vars"}
    metadata: {test_id: t1}
    assert:
      - $ref: "#/assertionTemplates/saysParis"
      - {$ref: "#/assertionTemplates/saysParis", type: not-contains}
`)
	if len(tests) != 1 {
		t.Fatalf("%d tests, want 1", len(tests))
	}
	tt := tests[0]
	if tt.User != "Capital of France?" {
		t.Errorf("user %q: vars from a $ref are not rendered", tt.User)
	}
	var types []string
	for _, ch := range tt.Checks {
		types = append(types, ch.Type+" "+ch.Value)
	}
	got := strings.Join(types, "; ")
	for _, want := range []string{"javascript output.length < 40", "contains Paris", "not-contains Paris"} {
		if !strings.Contains(got, want) {
			t.Errorf("checks %q lack %q", got, want)
		}
	}
	out := check.Output{Content: "Paris."}
	var verdicts []bool
	for _, r := range check.RunChecks(tt.Checks, out) {
		verdicts = append(verdicts, r.Pass)
	}
	if len(verdicts) < 3 || !verdicts[0] || !verdicts[1] || verdicts[2] {
		t.Errorf("on %q: %v, want the template, its contains and its not-contains (false)", out.Content, verdicts)
	}
	if b, _ := json.Marshal(tt.Tools); !strings.Contains(string(b), `"$ref":"#/definitions/args"`) {
		t.Errorf("tools %s: a tool's schema keeps its own $ref, as promptfoo leaves it", b)
	}
	if strings.Contains(strings.Join(warnings, "\n"), "assertionTemplates") {
		t.Errorf("warnings %q name assertionTemplates as not read", warnings)
	}
}

func TestPromptfooRefsThatCannotResolveNameThemselves(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"another file", `assert: [{$ref: "other.yaml#/a"}]`, `names another file`},
		{"missing", `assert: [{$ref: "#/assertionTemplates/nope"}]`, `no "nope"`},
		{"circular", `assert: [{$ref: "#/assertionTemplates/loop"}]`, `circular`},
		{"bad index", `assert: [{$ref: "#/tests/7"}]`, `not an index`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := "assertionTemplates:\n  loop: {$ref: \"#/assertionTemplates/loop\"}\nprompts: [\"{{q}}\"]\ntests:\n  - vars: {q: x}\n    " + tc.yaml + "\n"
			p := filepath.Join(t.TempDir(), "pf.yaml")
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := config.LoadBattery(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "$ref") {
				t.Errorf("err = %v, want one naming the $ref and %q", err, tc.want)
			}
		})
	}
}
