package check_test

// The javascript check's engine is an edge: these tests link it, as cli
// does, from outside the package.

import (
	"strings"
	"testing"

	_ "pitwall/edges/jsassert"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

func TestJavascriptCheckDecides(t *testing.T) {
	calls := []chat.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}
	prompptfoo := "const result = JSON.parse(output);\nreturn result.some(tc =>\n  tc.function?.name === 'get_weather' &&\n  tc.function?.arguments?.includes('Tokyo')\n);\n"
	textOnly := "try {\n  const parsed = JSON.parse(output);\n  return !Array.isArray(parsed) || parsed.length === 0;\n} catch {\n  return true;\n}\n"
	tests := []struct {
		name   string
		check  check.Check
		out    check.Output
		pass   bool
		reason string
	}{
		{"tool calls are the raw value: JSON.parse of them throws, as in promptfoo", check.Check{Type: "javascript", Value: prompptfoo}, check.Output{ToolCalls: calls}, false, "threw SyntaxError"},
		{"tool calls are an array", check.Check{Type: "javascript", Value: "output.some(tc => tc.function.name === 'get_weather')"}, check.Output{ToolCalls: calls}, true, ""},
		{"the same script fails on text", check.Check{Type: "javascript", Value: prompptfoo}, check.Output{Content: "It is sunny."}, false, "threw SyntaxError"},
		{"a text answer passes the text-only script", check.Check{Type: "javascript", Value: textOnly}, check.Output{Content: "4"}, true, ""},
		{"a call passes the text-only script, whose JSON.parse throws on the raw value", check.Check{Type: "javascript", Value: textOnly}, check.Output{ToolCalls: calls}, true, ""},
		{"text beside calls is the message", check.Check{Type: "javascript", Value: "output.content === 'Checking.' && output.tool_calls[0].id === 'call_9'"}, check.Output{Content: "Checking.", ToolCalls: calls}, true, ""},
		{"thinking is not the output", check.Check{Type: "javascript", Value: "output === 'Paris'"}, check.Output{Content: "<think>hmm</think>Paris"}, true, ""},
		{"vars in the context", check.Check{Type: "javascript", Value: "output.includes(context.vars.city)", Args: map[string]any{"vars": map[string]any{"city": "Paris"}}}, check.Output{Content: "Paris"}, true, ""},
		{"threshold", check.Check{Type: "javascript", Value: "output.length / 10", Args: map[string]any{"threshold": 0.5}}, check.Output{Content: "abc"}, false, "below the threshold 0.5"},
		{"grading result", check.Check{Type: "javascript", Value: "({pass: false, score: 0, reason: 'too short: ' + output.length})"}, check.Output{Content: "abc"}, false, "too short: 3"},
		{"json output", check.Check{Type: "javascript", Value: "output.city === 'Paris'", Args: map[string]any{"output": "json"}}, check.Output{Content: `{"city": "Paris"}`}, true, ""},
		{"not-javascript", check.Check{Type: "not-javascript", Value: "output === 'no'"}, check.Output{Content: "yes"}, true, ""},
		{"a throw names the test", check.Check{Type: "javascript", Value: "output.x.y", Args: map[string]any{"test_id": "weather", "source": "b.yaml:12"}}, check.Output{Content: "x"}, false, `invalid check: test "weather" (b.yaml:12): javascript assertion: threw TypeError`},
		{"a throw fails the not- form too", check.Check{Type: "not-javascript", Value: "output.x.y"}, check.Output{Content: "x"}, false, "invalid check"},
		{"a module", check.Check{Type: "javascript", Value: "module.exports = (output, context) => output.length === context.vars.n;", Args: map[string]any{"module": true, "file": "len.js", "vars": map[string]any{"n": 2}}}, check.Output{Content: "ab"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := check.ValidateCheck(tt.check); err != nil {
				t.Fatalf("ValidateCheck: %v", err)
			}
			r := check.RunChecks([]check.Check{tt.check}, tt.out)[0]
			if r.Pass != tt.pass {
				t.Fatalf("Pass = %v, want %v (reason %q)", r.Pass, tt.pass, r.Reason)
			}
			if !r.Pass && !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", r.Reason, tt.reason)
			}
		})
	}
}

func TestJavascriptSyntaxErrorIsAnInvalidCheck(t *testing.T) {
	c := check.Check{Type: "javascript", Value: "return (;\n"}
	if err := check.ValidateCheck(c); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("ValidateCheck = %v, want a syntax error", err)
	}
	if r := check.RunChecks([]check.Check{c}, check.Output{Content: "x"})[0]; r.Pass || !strings.HasPrefix(r.Reason, "invalid check") {
		t.Errorf("RunChecks = %+v, want an invalid check", r)
	}
}
