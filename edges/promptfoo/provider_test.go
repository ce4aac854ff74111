package promptfoo

import (
	"strings"
	"testing"

	"pitwall/config"
)

const providerTools = `
      tools:
        - type: function
          function: {name: %s, parameters: {type: object, properties: {}}}`

func toolNames(t config.Test) string {
	var out []string
	for _, tl := range t.Tools {
		out = append(out, tl.Function.Name)
	}
	return strings.Join(out, ",")
}

// TestPromptfooProvidersShapeTheRequestAsPromptfooSendsIt: what promptfoo
// 0.123.1 puts on the wire (e2e/promptfoo checks it): the config's
// provider's tools; a test's own provider's in their place (none for a
// provider named by id alone); never options.provider's, the grader's,
// except in prompt-prix's batteries, which put the model's tools there.
func TestPromptfooProvidersShapeTheRequestAsPromptfooSendsIt(t *testing.T) {
	body := "prompts: [\"{{q}}\"]\nproviders:\n  - id: openai:chat:m1\n    config:" + strings.ReplaceAll(providerTools, "%s", "from_config") + `
tests:
  - metadata: {test_id: plain}
    vars: {q: a}
  - metadata: {test_id: grader}
    vars: {q: b}
    options:
      provider:
        config:` + strings.ReplaceAll(strings.ReplaceAll(providerTools, "\n      ", "\n          "), "%s", "for_grader") + `
          tool_choice: required
  - metadata: {test_id: own}
    vars: {q: c}
    provider:
      id: openai:chat:m2
      config:` + strings.ReplaceAll(strings.ReplaceAll(providerTools, "\n      ", "\n        "), "%s", "own_tool") + `
  - metadata: {test_id: by-id}
    vars: {q: d}
    provider: openai:chat:m2
`
	tests, warnings := loadYAML(t, body)
	got := map[string]config.Test{}
	for _, tt := range tests {
		got[tt.ID] = tt
	}
	for id, want := range map[string]string{"plain": "from_config", "grader": "from_config", "own": "own_tool", "by-id": ""} {
		if names := toolNames(got[id]); names != want {
			t.Errorf("%s: tools %q, want %q", id, names, want)
		}
	}
	if got["grader"].ToolChoice != nil || got["grader"].Dialect != "" {
		t.Errorf("grader: tool_choice %v dialect %q: options.provider is promptfoo's grader", got["grader"].ToolChoice, got["grader"].Dialect)
	}
	all := strings.Join(warnings, "\n")
	for _, w := range []string{"options.provider configures promptfoo's grader", "a test's own provider", "(in own, by-id)"} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
}

// TestPromptfooPromptPrixBatteryOffersOptionsProviderTools: a battery of
// prompt-prix's shape (vars test_id, category and severity, or metadata
// dialect: prompt-prix) keeps its tools, with tool_choice validated and
// not sent, and says where that differs from promptfoo.
func TestPromptfooPromptPrixBatteryOffersOptionsProviderTools(t *testing.T) {
	test := `
  - vars: {q: a%s}
    options:
      provider:
        config:` + strings.ReplaceAll(strings.ReplaceAll(providerTools, "\n      ", "\n          "), "%s", "get_weather") + `
          tool_choice: required
`
	for name, body := range map[string]string{
		"vars":   "prompts: [\"{{q}}\"]\ntests:" + strings.Replace(test, "%s", ", test_id: w, category: tools, severity: critical", 1),
		"marker": "metadata: {dialect: prompt-prix}\nprompts: [\"{{q}}\"]\ntests:" + strings.Replace(test, "%s", ", test_id: w", 1),
	} {
		t.Run(name, func(t *testing.T) {
			tests, warnings := loadYAML(t, body)
			w := tests[0]
			if toolNames(w) != "get_weather" || w.ToolChoice != "required" || w.Dialect != config.DialectPromptPrix || w.SendsToolChoice(config.Run{}) {
				t.Errorf("tools %q choice %v dialect %q", toolNames(w), w.ToolChoice, w.Dialect)
			}
			if all := strings.Join(warnings, "\n"); !strings.Contains(all, "prompt-prix's battery") || !strings.Contains(all, "promptfoo sends none of them") {
				t.Errorf("warnings do not name the difference:\n%s", all)
			}
		})
	}
	// Without the shape, the same test offers nothing.
	tests, _ := loadYAML(t, "prompts: [\"{{q}}\"]\ntests:"+strings.Replace(test, "%s", ", test_id: w", 1))
	if len(tests[0].Tools) != 0 || tests[0].ToolChoice != nil {
		t.Errorf("tools %q choice %v from the grader's config", toolNames(tests[0]), tests[0].ToolChoice)
	}
}
