package check

import (
	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
	"strings"
	"testing"
)

// failures returns the names of the failed results, and their reasons.
func failures(rs []scoring.CheckResult) (names []string, reasons string) {
	for _, r := range rs {
		if !r.Pass {
			names = append(names, r.Name)
			reasons += r.Reason + "\n"
		}
	}
	return names, reasons
}

func TestValidateFlagsBadReplies(t *testing.T) {
	named := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}
	call := func(name, args string) []chat.ToolCall { return []chat.ToolCall{{Name: name, Arguments: args}} }
	tests := []struct {
		name   string
		expect Expect
		out    Output
		fail   string // the one failed rule's name; "" when all pass
		reason string
	}{
		{"plain answer", Expect{}, Output{Content: "Paris."}, "", ""},
		{"empty", Expect{}, Output{Content: "  \n"}, "not-empty", "no text and no tool call"},
		{"think only", Expect{}, Output{Content: "<think>let me see</think>"}, "not-empty", "max_tokens"},
		{"tool call is not empty", Expect{HasTools: true}, Output{ToolCalls: call("f", "{}")}, "", ""},
		{"refusal", Expect{}, Output{Content: "I'm sorry, but I can't help with that."}, "not-refusal", "refusal"},
		{"can't mid-sentence is an answer", Expect{}, Output{Content: "You can't divide by zero, so the answer is undefined."}, "", ""},
		{"required without a call", Expect{HasTools: true, ToolChoice: "required"}, Output{Content: "It is sunny."}, "tool_choice=required", "no tool call"},
		{"required with a call", Expect{HasTools: true, ToolChoice: "required"}, Output{ToolCalls: call("f", `{"a":1}`)}, "", ""},
		{"any means required", Expect{HasTools: true, ToolChoice: "any"}, Output{Content: "x"}, "tool_choice=required", ""},
		{"none with a call", Expect{HasTools: true, ToolChoice: "none"}, Output{ToolCalls: call("f", "{}")}, "tool_choice=none", "called f({})"},
		{"none without a call", Expect{HasTools: true, ToolChoice: "none"}, Output{Content: "ok"}, "", ""},
		{"auto either way", Expect{HasTools: true, ToolChoice: "auto"}, Output{Content: "ok"}, "", ""},
		{"named without a call", Expect{HasTools: true, ToolChoice: named}, Output{Content: "ok"}, "tool_choice=get_weather", "no tool call"},
		{"named with another name", Expect{HasTools: true, ToolChoice: named}, Output{ToolCalls: call("get_time", "{}")}, "tool_choice=get_weather", "called get_time"},
		{"named with that name", Expect{HasTools: true, ToolChoice: named}, Output{ToolCalls: call("get_weather", `{"city":"Tokyo"}`)}, "", ""},
		{"named from TOML", Expect{HasTools: true, ToolChoice: map[string]any{"type": "function", "name": "f"}}, Output{ToolCalls: call("g", "{}")}, "tool_choice=f", ""},
		{"tool_choice without tools is ignored", Expect{ToolChoice: "required"}, Output{Content: "ok"}, "", ""},
		{"call without tools offered", Expect{}, Output{ToolCalls: call("f", "{}")}, "tools-offered", "offered no tools"},
		{"args not JSON", Expect{HasTools: true}, Output{ToolCalls: call("f", `{"city": Tokyo}`)}, "tool-args-json", "f arguments are not JSON"},
		{"args not an object", Expect{HasTools: true}, Output{ToolCalls: call("f", `["Tokyo"]`)}, "tool-args-json", "not an object"},
		{"empty args are fine", Expect{HasTools: true}, Output{ToolCalls: call("f", "")}, "", ""},
		{"json_object with prose", Expect{ResponseFormat: &chat.ResponseFormat{Type: "json_object"}}, Output{Content: "Here: {}"}, "response_format=json_object", "not JSON"},
		{"json_object fenced", Expect{ResponseFormat: &chat.ResponseFormat{Type: "json_object"}}, Output{Content: "```json\n{\"a\": 1}\n```"}, "", ""},
		{"json_object array", Expect{ResponseFormat: &chat.ResponseFormat{Type: "json_object"}}, Output{Content: "[1]"}, "response_format=json_object", "not an object"},
		{"json_schema checked", Expect{ResponseFormat: &chat.ResponseFormat{Type: "json_schema", Schema: map[string]any{"type": "object", "required": []any{"name"}}}}, Output{Content: `{"age": 3}`}, "response_format=json_schema", `missing required property "name"`},
		{"json_schema wrapped the OpenAI way", Expect{ResponseFormat: &chat.ResponseFormat{Type: "json_schema", Schema: map[string]any{"name": "x", "schema": map[string]any{"type": "array"}}}}, Output{Content: `{}`}, "response_format=json_schema", "want array"},
		{"json_schema met", Expect{ResponseFormat: &chat.ResponseFormat{Type: "json_schema", Schema: map[string]any{"type": "object"}}}, Output{Content: `{"a": 1}`}, "", ""},
		{"text format is not checked", Expect{ResponseFormat: &chat.ResponseFormat{Type: "text"}}, Output{Content: "hello"}, "", ""},
		{"json format with only a tool call", Expect{HasTools: true, ResponseFormat: &chat.ResponseFormat{Type: "json_object"}}, Output{ToolCalls: call("f", "{}")}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := Validate(tt.expect, tt.out)
			names, reasons := failures(rs)
			if tt.fail == "" {
				if len(names) > 0 {
					t.Fatalf("failed %v: %s", names, reasons)
				}
				if !Passed(rs) {
					t.Fatal("Passed = false with no failed result")
				}
				return
			}
			if len(names) != 1 || names[0] != tt.fail {
				t.Fatalf("failed %v, want exactly [%s]; reasons: %s", names, tt.fail, reasons)
			}
			if Passed(rs) {
				t.Error("Passed = true with a failed result")
			}
			if !strings.Contains(reasons, tt.reason) {
				t.Errorf("reasons %q do not contain %q", reasons, tt.reason)
			}
		})
	}
}

func TestValidateAlwaysReportsNotEmpty(t *testing.T) {
	rs := Validate(Expect{}, Output{Content: "Paris"})
	if len(rs) == 0 || rs[0].Name != "not-empty" || !rs[0].Pass {
		t.Fatalf("got %+v, want not-empty first and passed", rs)
	}
}

func TestPassed(t *testing.T) {
	tests := []struct {
		name string
		rs   []scoring.CheckResult
		want bool
	}{
		{"none", nil, true},
		{"all pass", []scoring.CheckResult{{Pass: true}, {Pass: true}}, true},
		{"one fails", []scoring.CheckResult{{Pass: true}, {Pass: false}}, false},
	}
	for _, tt := range tests {
		if got := Passed(tt.rs); got != tt.want {
			t.Errorf("%s: Passed = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsRefusal(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"I can't help with that.", true},
		{"I cannot assist with this request.", true},
		{"I can’t provide that information.", true},
		{"Sorry, but I can't do that.", true},
		{"I'm sorry, but I cannot comply.", true},
		{"I apologize, but I won't write that.", true},
		{"Unfortunately, I am unable to help with that.", true},
		{"I'm not able to share those details.", true},
		{"I'm afraid I can't do that, Dave.", true},
		{"I must decline.", true},
		{"As an AI, I don't have opinions.", true},
		{"As an AI language model, I cannot browse.", true},
		{"**I can't help with that.**", true},
		{"  \n I  cannot   help with that", true},
		{"I can't be certain, but the answer is 4.", false},
		{"You can't divide by zero.", false},
		{"The capital is Paris. I can't stress enough how old it is.", false},
		{"Sorry for the delay: the answer is 42.", false},
		{"I won the game.", false},
		{"As announced, the API changed.", false},
		{"Asian markets rose.", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isRefusal(tt.text); got != tt.want {
			t.Errorf("isRefusal(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// isRefusal's first-letter shortcut changes no answer's outcome: it agrees
// with the pattern applied to every answer.
func FuzzIsRefusalShortcut(f *testing.F) {
	for _, s := range []string{"I can't help with that", "Sorry, but I cannot assist", "As an AI, I", "4", "  **I'm unable to provide**",
		"\u2018I won't help", "İ cannot help", "unfortunately i can't do that", "The API can't be called twice", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		s := strings.TrimLeft(strings.TrimSpace(answer), "*_#>\"'` \t\r\n")
		if len(s) > refusalHead {
			s = s[:refusalHead]
		}
		s = strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(strings.ToLower(s))
		want := refusalRE.MatchString(strings.Join(strings.Fields(s), " "))
		if got := isRefusal(answer); got != want {
			t.Errorf("isRefusal(%q) = %v, the pattern says %v", answer, got, want)
		}
	})
}

// A test whose own checks want a refusal or an empty reply is not failed
// by the validation for being one; every other test still is.
func TestValidationStepsAsideForTheReplyATestWants(t *testing.T) {
	pf := map[string]any{"output": "promptfoo"}
	cases := []struct {
		name   string
		checks []Check
		out    Output
		pass   bool
	}{
		{"a refusal fails a test that wants none", nil, Output{Content: "I'm sorry, but I can't help with that."}, false},
		{"a refusal passes a test that wants one", []Check{{Type: "not-not-refusal"}}, Output{Content: "I'm sorry, but I can't help with that."}, true},
		{"native is-refusal still wants text", []Check{{Type: "not-not-refusal"}}, Output{}, false},
		{"promptfoo's is-refusal takes an empty reply", []Check{{Type: "not-not-refusal", Args: pf}}, Output{}, true},
		{"an empty reply passes equals \"\"", []Check{{Type: "equals", Args: pf}}, Output{}, true},
		{"not-equals \"\" keeps not-empty", []Check{{Type: "not-equals", Args: pf}}, Output{}, false},
		{"an empty reply fails a test that wants text", []Check{{Type: "contains", Value: "x"}}, Output{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := append(Validate(Expect{}.Wanting(tc.checks), tc.out), RunChecks(tc.checks, tc.out)...)
			if got := Passed(res); got != tc.pass {
				t.Errorf("pass = %v, want %v: %+v", got, tc.pass, res)
			}
		})
	}
}
