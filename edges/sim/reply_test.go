package sim

import (
	"encoding/json"
	"fmt"
	"pitwall/gpu/simspec"
	"strings"
	"testing"
)

func TestSameRequestGivesTheSameReply(t *testing.T) {
	cfg := instant("m1", "m2")
	s := start(t, cfg)
	c := client(t)
	for _, tc := range []struct {
		name  string
		model string
		extra map[string]any
	}{
		{"no seed", "m1", nil},
		{"seed and temperature", "m1", map[string]any{"seed": 7, "temperature": 0.7}},
		{"other model", "m2", map[string]any{"seed": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := body(tc.model, "Describe the water cycle.", tc.extra)
			first := complete(t, c, s, b).content()
			second := complete(t, c, s, b).content()
			if first == "" || first != second {
				t.Errorf("replies differ:\n%q\n%q", first, second)
			}
		})
	}
	a := complete(t, c, s, body("m1", "Describe the water cycle.", map[string]any{"seed": 1})).content()
	b := complete(t, c, s, body("m1", "Describe the water cycle.", map[string]any{"seed": 2})).content()
	if a == b {
		t.Errorf("different seeds gave the same reply %q", a)
	}
}

// battery builds n arithmetic prompts with their answers.
func battery(n int, category string) map[string]Answer {
	out := make(map[string]Answer, n)
	for i := range n {
		out[fmt.Sprintf("What is %d plus %d?", i, i+10)] = Answer{Category: category, Content: fmt.Sprint(2*i + 10)}
	}
	return out
}

func TestSkillDecidesTheShareOfRightAnswers(t *testing.T) {
	answers := battery(200, "math")
	for _, tc := range []struct {
		name     string
		ms       simspec.Model
		min, max int // right answers of 200
	}{
		{"skilled", simspec.Model{Skill: 1}, 200, 200},
		{"middling", simspec.Model{Skill: 0.5}, 70, 130},
		{"category skill overrides", simspec.Model{Skill: 1, Skills: map[string]float64{"math": 0}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := instant("m")
			cfg.Catalog = map[string]simspec.Model{"m": tc.ms}
			cfg.Answers = answers
			s := start(t, cfg)
			c := client(t)
			right := 0
			for prompt, ans := range answers {
				if strings.HasPrefix(complete(t, c, s, body("m", prompt, nil)).content(), ans.Content+"\n") {
					right++
				}
			}
			if right < tc.min || right > tc.max {
				t.Errorf("%d right of 200, want %d..%d", right, tc.min, tc.max)
			}
		})
	}
}

func TestWrongAnswersVary(t *testing.T) {
	answers := battery(300, "math")
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skills: map[string]float64{"math": 0}}}
	cfg.Answers = answers
	s := start(t, cfg)
	c := client(t)
	kinds := map[string]int{}
	for prompt, ans := range answers {
		got := complete(t, c, s, body("m", prompt, nil)).content()
		switch {
		case got == "":
			kinds["empty"]++
		case got == refusal:
			kinds["refusal"]++
		case containsNorm(got, ans.Content):
			t.Errorf("a wrong answer to %q contains the right one %q: %q", prompt, ans.Content, got)
		default:
			kinds["other"]++
		}
	}
	for _, k := range []string{"empty", "refusal", "other"} {
		if kinds[k] == 0 {
			t.Errorf("no %s answers among 300 wrong ones: %v", k, kinds)
		}
	}
}

func TestToolAnswersRightAndWrong(t *testing.T) {
	tools := []any{weatherTool(), map[string]any{"type": "function", "function": map[string]any{"name": "get_time",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}}}}}
	answers := map[string]Answer{}
	for i := range 200 {
		answers[fmt.Sprintf("Weather in city %d?", i)] = Answer{Category: "tools", ToolName: "get_weather", ToolArgs: map[string]any{"city": fmt.Sprintf("City%d", i)}}
	}
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skills: map[string]float64{"tools": 0.5}}}
	cfg.Answers = answers
	s := start(t, cfg)
	c := client(t)
	forced := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}
	for _, tc := range []struct {
		name       string
		toolChoice any
		want, not  []string // kinds of reply that must occur, and that must not
	}{
		{"auto", "auto", []string{"right", "text", "invalid args", "wrong tool", "wrong args"}, nil},
		{"required: a call, of any offered tool", "required", []string{"right", "invalid args", "wrong tool", "wrong args"}, []string{"text"}},
		{"named function: a call of it", forced, []string{"right", "invalid args", "wrong args"}, []string{"text", "wrong tool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds := map[string]int{}
			for prompt, ans := range answers {
				b := complete(t, c, s, body("m", prompt, map[string]any{"tools": tools, "tool_choice": tc.toolChoice}))
				msg := b.Choices[0].Message
				if len(msg.ToolCalls) == 0 {
					kinds["text"]++
					continue
				}
				fn := msg.ToolCalls[0].Function
				var args map[string]any
				switch {
				case fn.Name != "get_weather" && fn.Name != "get_time":
					t.Errorf("a call of %q, which was not offered", fn.Name)
				case json.Unmarshal([]byte(fn.Arguments), &args) != nil:
					kinds["invalid args"]++
				case fn.Name != "get_weather":
					kinds["wrong tool"]++
				case args["city"] != ans.ToolArgs["city"] || len(args) != 1:
					kinds["wrong args"]++
				default:
					kinds["right"]++
				}
			}
			for _, k := range tc.want {
				if kinds[k] == 0 {
					t.Errorf("no %q replies among 200: %v", k, kinds)
				}
			}
			for _, k := range tc.not {
				if kinds[k] != 0 {
					t.Errorf("%d %q replies among 200: %v", kinds[k], k, kinds)
				}
			}
			if kinds["right"] < 60 || kinds["right"] > 140 {
				t.Errorf("%d right of 200 at skill 0.5: %v", kinds["right"], kinds)
			}
		})
	}
}

func TestJSONAnswers(t *testing.T) {
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skill: 1}}
	cfg.Answers = map[string]Answer{
		"Give the user as JSON.": {JSON: true, Content: `{"name":"Ada","age":36}`},
		"Name a colour.":         {Content: "blue"},
	}
	s := start(t, cfg)
	c := client(t)
	for _, tc := range []struct {
		name, prompt string
		extra        map[string]any
		want         map[string]any
	}{
		{"answer is JSON", "Give the user as JSON.", nil, map[string]any{"name": "Ada", "age": 36.0}},
		{"json_object asked", "Name a colour.", map[string]any{"response_format": map[string]any{"type": "json_object"}}, map[string]any{"answer": "blue"}},
		{"no oracle, json_schema asked", "Unknown prompt", map[string]any{"response_format": map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "x", "schema": map[string]any{"type": "object",
				"properties": map[string]any{"n": map[string]any{"type": "integer"}, "ok": map[string]any{"type": "boolean"}}}}}},
			map[string]any{"n": 1.0, "ok": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := complete(t, c, s, body("m", tc.prompt, tc.extra)).content()
			var obj map[string]any
			if err := json.Unmarshal([]byte(got), &obj); err != nil {
				t.Fatalf("not JSON: %q", got)
			}
			if fmt.Sprint(obj) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", obj, tc.want)
			}
		})
	}
}

func TestWrongJSONAnswersAreNotTheRightJSON(t *testing.T) {
	answers := map[string]Answer{}
	for i := range 100 {
		answers[fmt.Sprintf("Record %d as JSON", i)] = Answer{JSON: true, Content: fmt.Sprintf(`{"id":%d}`, i)}
	}
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skill: 1, Skills: map[string]float64{"": 0}}}
	cfg.Answers = answers
	s := start(t, cfg)
	c := client(t)
	invalid := 0
	for prompt, ans := range answers {
		got := complete(t, c, s, body("m", prompt, nil)).content()
		if got == ans.Content {
			t.Errorf("%q: a wrong answer is the right JSON", prompt)
		}
		if !json.Valid([]byte(got)) {
			invalid++
		}
	}
	if invalid == 0 || invalid == 100 {
		t.Errorf("%d of 100 wrong JSON answers are invalid JSON; want some of each kind", invalid)
	}
}

func TestUnknownPromptsGetGenericReplies(t *testing.T) {
	s := start(t, instant("m"))
	c := client(t)
	t.Run("text", func(t *testing.T) {
		got := complete(t, c, s, body("m", "hello there", nil)).content()
		if !strings.HasPrefix(got, "Here is a short answer about hello there.") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("required tool call is built from the schema", func(t *testing.T) {
		b := complete(t, c, s, body("m", "anything", map[string]any{"tools": []any{weatherTool()}, "tool_choice": "required"}))
		tc := b.Choices[0].Message.ToolCalls
		if len(tc) != 1 || tc[0].Function.Name != "get_weather" || tc[0].Function.Arguments != `{"city":"example"}` {
			t.Errorf("tool calls %+v", tc)
		}
	})
	t.Run("named function", func(t *testing.T) {
		other := map[string]any{"type": "function", "function": map[string]any{"name": "ping"}}
		b := complete(t, c, s, body("m", "anything", map[string]any{"tools": []any{weatherTool(), other},
			"tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "ping"}}}))
		tc := b.Choices[0].Message.ToolCalls
		if len(tc) != 1 || tc[0].Function.Name != "ping" || tc[0].Function.Arguments != `{}` {
			t.Errorf("tool calls %+v", tc)
		}
	})
	t.Run("tool_choice none answers in text", func(t *testing.T) {
		b := complete(t, c, s, body("m", "anything", map[string]any{"tools": []any{weatherTool()}, "tool_choice": "none"}))
		if len(b.Choices[0].Message.ToolCalls) != 0 || b.content() == "" {
			t.Errorf("reply %+v", b.Choices[0].Message)
		}
	})
}

func TestAToolResultIsAnsweredInText(t *testing.T) {
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skill: 1}}
	cfg.Answers = map[string]Answer{"Weather in Oslo?": {ToolName: "get_weather", ToolArgs: map[string]any{"city": "Oslo"}, Content: "It is 3 degrees in Oslo."}}
	s := start(t, cfg)
	req := map[string]any{"model": "m", "tools": []any{weatherTool()}, "messages": []any{
		map[string]any{"role": "user", "content": "Weather in Oslo?"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Oslo"}`}}}},
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": "3C, cloudy"},
	}}
	raw, _ := json.Marshal(req)
	b := complete(t, client(t), s, raw)
	if len(b.Choices[0].Message.ToolCalls) != 0 || !strings.HasPrefix(b.content(), "It is 3 degrees in Oslo.") {
		t.Errorf("reply %+v %q", b.Choices[0].Message, b.content())
	}
}

func TestReplyLengthVariesAroundReplyTokens(t *testing.T) {
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {ReplyTokens: 100}}
	s := start(t, cfg)
	c := client(t)
	lo, hi := 1<<30, 0
	for i := range 40 {
		n := complete(t, c, s, body("m", fmt.Sprintf("prompt %d", i), nil)).Usage.CompletionTokens
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo < 50 || hi > 160 || hi-lo < 20 {
		t.Errorf("completion tokens range %d..%d, want a spread around 100", lo, hi)
	}
}

func TestExactAnswersCarryNoPadding(t *testing.T) {
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skill: 1}}
	cfg.Answers = map[string]Answer{"Say OK.": {Content: "OK", Exact: true}, "Say hi.": {Content: "hi"}}
	s := start(t, cfg)
	c := client(t)
	if got := complete(t, c, s, body("m", "Say OK.", nil)).content(); got != "OK" {
		t.Errorf("exact: %q", got)
	}
	if got := complete(t, c, s, body("m", "Say hi.", nil)).content(); !strings.HasPrefix(got, "hi\n\n") {
		t.Errorf("padded: %q", got)
	}
}
