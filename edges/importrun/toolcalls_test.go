package importrun

import (
	"strings"
	"testing"

	"pitwall/gpu/chat"
)

func TestImportToolCallsInText(t *testing.T) {
	tc := func(name, args string) chat.ToolCall { return chat.ToolCall{Name: name, Arguments: args} }
	tests := []struct {
		name     string
		in       string
		wantText string
		want     []chat.ToolCall
	}{
		{"plain text", "It is sunny.", "It is sunny.", nil},
		{"prompt-prix rendering", "\n**Tool Call:** `get_weather`\n```json\n{\"city\": \"Tokyo\"}\n```\n",
			"", []chat.ToolCall{tc("get_weather", `{"city": "Tokyo"}`)}},
		{"text around a rendered call", "Let me check.\n**Tool Call:** `get_weather`\n```json\n{\"city\":\"Oslo\"}\n```\nDone.",
			"Let me check.\n\nDone.", []chat.ToolCall{tc("get_weather", `{"city":"Oslo"}`)}},
		{"parallel rendered calls", renderPP(call("Paris"), call("Rome")), "", []chat.ToolCall{call("Paris"), call("Rome")}},
		{"streamed fragments joined", renderFragments(call("Lima")), "", []chat.ToolCall{call("Lima")}},
		{"a rendered call with no arguments", "**Tool Call:** `list_files`\nThen text.", "Then text.", []chat.ToolCall{tc("list_files", "")}},
		{"any case of the marker", "**TOOL CALL:** `f`\n```json\n{}\n```", "", []chat.ToolCall{tc("f", "{}")}},
		{"a fence cut off by the end", "**Tool Call:** `f`\n```json\n{\"a\": 1", "", []chat.ToolCall{tc("f", `{"a": 1`)}},
		{"a marker without a name stays text", "**Tool Call:** none here", "**Tool Call:** none here", nil},
		{"LFM tokens", `<|tool_call_start|>[get_weather(city="Tokyo")]<|tool_call_end|>`, "", []chat.ToolCall{call("Tokyo")}},
		{"LFM parallel calls and values", `Sure. <|tool_call_start|>[a(x=1, y=-2.5, z=True), b(s='it\'s', l=[1, None], d={"k": (1, 2)})]<|tool_call_end|>`,
			"Sure.", []chat.ToolCall{tc("a", `{"x":1,"y":-2.5,"z":true}`), tc("b", `{"s":"it's","l":[1,null],"d":{"k":[1,2]}}`)}},
		{"LFM without its end token", `<|tool_call_start|>[f(q="x")]`, "", []chat.ToolCall{tc("f", `{"q":"x"}`)}},
		{"LFM JSON list", `<|tool_call_start|>[{"name": "f", "arguments": {"q": 1}}]<|tool_call_end|>`, "", []chat.ToolCall{tc("f", `{"q":1}`)}},
		{"LFM arguments that do not parse kept as written", `<|tool_call_start|>[f(q=undefined_name)]<|tool_call_end|>`,
			"", []chat.ToolCall{tc("f", "q=undefined_name")}},
		{"LFM without a call stays text", "<|tool_call_start|>nothing<|tool_call_end|>", "<|tool_call_start|>nothing<|tool_call_end|>", nil},
		{"Hermes", `<tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</tool_call>`, "", []chat.ToolCall{call("Tokyo")}},
		{"Hermes with parameters as text", `<function_call>{"name": "f", "parameters": "{\"a\":1}"}</function_call>`, "", []chat.ToolCall{tc("f", `{"a":1}`)}},
		{"Hermes that is not JSON stays text", "<tool_call>f(1)</tool_call>", "<tool_call>f(1)</tool_call>", nil},
		{"mixed encodings in order", renderLFM("Rome") + "\n" + renderPP(call("Oslo")), "", []chat.ToolCall{call("Rome"), call("Oslo")}},
		{"prompt-prix's sentinel, OpenAI's shape", `__TOOL_CALLS__:[{"id": "call_1", "type": "function", "function": {"name": "calculate", "arguments": "{\"expression\": \"2+2=4\"}"}}]`,
			"", []chat.ToolCall{{ID: "call_1", Name: "calculate", Arguments: `{"expression": "2+2=4"}`}}},
		{"the sentinel after text, arguments as an object", `Let me add. __TOOL_CALLS__: [{"name": "f", "arguments": {"n": 4}}]`,
			"Let me add.", []chat.ToolCall{tc("f", `{"n":4}`)}},
		{"a sentinel without calls stays text", "__TOOL_CALLS__:nope", "__TOOL_CALLS__:nope", nil},
		{"a multi-byte rune before the marker", "Ünïcödé İ **Tool Call:** `f`\n```json\n{}\n```", "Ünïcödé İ", []chat.ToolCall{tc("f", "{}")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, calls := ToolCallsInText(tt.in)
			if text != tt.wantText {
				t.Errorf("text %q, want %q", text, tt.wantText)
			}
			if len(calls) != len(tt.want) {
				t.Fatalf("calls %+v, want %+v", calls, tt.want)
			}
			for i := range calls {
				if calls[i] != tt.want[i] {
					t.Errorf("call %d = %+v, want %+v", i, calls[i], tt.want[i])
				}
			}
		})
	}
}

func TestImportPyCallsRefuse(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"positional argument", `f("x")`, "not key=value"},
		{"unclosed list", `[f(a=1)`, "does not close"},
		{"text after", `f(a=1) and more`, "text after"},
		{"unclosed string", `f(a="x)`, "does not close"},
		{"deep nesting", "f(a=" + strings.Repeat("[", maxPyDepth+1) + strings.Repeat("]", maxPyDepth+1) + ")", "nested deeper"},
		{"a huge number", "f(a=1e999)", "not a number"},
		{"no name", "(a=1)", "without a function name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parsePyCalls(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestImportCleanModelID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1: gemma-3-27b-it", "gemma-3-27b-it"},
		{"0:llama-3", "llama-3"},
		{"10:model-v2", "model-v2"},
		{"qwen/qwen3-8b", "qwen/qwen3-8b"},
		{"ollama:llama3", "ollama:llama3"}, // not a server index
		{":model", ":model"},
		{"3:", "3:"},
		{"  spaced  ", "spaced"},
	}
	for _, tt := range tests {
		if got := CleanModelID(tt.in); got != tt.want {
			t.Errorf("CleanModelID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var n notes
	got := cleanModels([]string{"0: gemma", "1: gemma", "qwen"}, &n)
	if got["0: gemma"] == got["1: gemma"] || got["qwen"] != "qwen" {
		t.Errorf("one model on two servers must keep two columns: %v", got)
	}
	if len(n.list()) != 1 {
		t.Errorf("notes %q, want one saying why", n.list())
	}
}

func TestImportClassifiesErrors(t *testing.T) {
	tests := []struct {
		msg  string
		want chat.ErrorClass
	}{
		{"Timeout waiting for server/completion for model: x", chat.ClassTimeout},
		{"LM Studio error for 'x': HTTP 404: model not found", chat.ClassHTTP4xx},
		{"status code 502", chat.ClassHTTP5xx},
		{"429 Too Many Requests", chat.ClassRateLimit},
		{"All connection attempts failed", chat.ClassUnavailable},
		{"Empty response received (possible aborted model load)", chat.ClassMalformed},
		{"max_tokens 500 reached", ""},
		{"something else", ""},
	}
	for _, tt := range tests {
		if got := classify(tt.msg); got != tt.want {
			t.Errorf("classify(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}

// A prompt-prix result whose status is error but which holds the model's
// response failed in prompt-prix's judge, not in the model: it imports as
// answered and unjudged, for rejudge, where one without a response stays
// an error.
func TestImportPromptPrixJudgeFailureIsAnAnswer(t *testing.T) {
	cases := []struct {
		name string
		m    map[string]any
		want Outcome
	}{
		{"judge failed", map[string]any{"status": "error", "response": "The answer is 4.", "error": "judge: connection refused"}, Answered},
		{"model failed", map[string]any{"status": "error", "response": "", "error": "HTTP 500: internal server error"}, Errored},
		{"cancelled with a response", map[string]any{"status": "error", "response": "partial", "error": "Battery run cancelled by user"}, Unfinished},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n notes
			r, err := ppResult(obj{m: tc.m}, &n)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != tc.want {
				t.Errorf("outcome %v, want %v", r.Outcome, tc.want)
			}
			if tc.want == Answered && (r.Verdict != "" || r.Error != "") {
				t.Errorf("verdict %q error %q, want an unjudged answer", r.Verdict, r.Error)
			}
		})
	}
}
