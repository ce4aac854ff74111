package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

func TestNativeBatteriesLoad(t *testing.T) {
	t.Parallel()
	toml := filepath.Join("testdata", "good", "batteries", "tools.toml")
	obj := filepath.Join("testdata", "batteries", "native.json")
	arr := filepath.Join("testdata", "batteries", "native_array.json")
	tests := []struct {
		name       string
		file       string
		ids        []string
		sourceAt   []string // text on the line each test's Source must name
		sourceNth  []int
		assertions func(t *testing.T, tests []Test)
	}{
		{"TOML", toml, []string{"weather-paris", "capital-france", "json-reply", "named-choice"},
			[]string{"[[tests]]", "[[tests]]", "[[tests]]", "[[tests]]"}, []int{1, 2, 3, 4},
			func(t *testing.T, tests []Test) {
				w := tests[0]
				if w.Criteria != "Pass if: Calls get_weather for Paris\nFail if: Answers without calling the tool" {
					t.Errorf("criteria not folded: %q", w.Criteria)
				}
				if len(w.Tools) != 1 || w.Tools[0].Function.Name != "get_weather" || w.Tools[0].Type != "function" {
					t.Errorf("tools = %+v", w.Tools)
				}
				want := check.Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": float64(1)}}
				if !reflect.DeepEqual(w.Checks[0], want) {
					t.Errorf("check = %#v, want %#v (numbers as float64, like JSON)", w.Checks[0], want)
				}
				if w.Checks[1].Type != "max-latency" || w.Checks[1].Value != "30s" {
					t.Errorf("latency check = %+v", w.Checks[1])
				}
				if c := tests[1].Checks; len(c) != 2 || c[1].Type != "not-refusal" {
					t.Errorf("inline checks = %+v", c)
				}
				j := tests[2]
				if len(j.Messages) != 2 || j.Messages[0].Role != "system" || j.User != "" {
					t.Errorf("messages = %+v", j.Messages)
				}
				if rf := j.ResponseFormat; rf == nil || rf.Type != "json_schema" || rf.Name != "city" || rf.Schema == nil {
					t.Errorf("OpenAI-nested json_schema not flattened: %+v", rf)
				}
				wantChoice := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}
				if !reflect.DeepEqual(tests[3].ToolChoice, wantChoice) {
					t.Errorf("short tool_choice = %#v, want OpenAI's shape", tests[3].ToolChoice)
				}
				if tests[3].User != "Look up the weather\nin [[tests]] Tokyo.\n" {
					t.Errorf("multi-line user = %q", tests[3].User)
				}
			}},
		{"JSON object", obj, []string{"weather", "capital"}, []string{`"id": "weather"`, `{"id": "capital"`}, []int{1, 1},
			func(t *testing.T, tests []Test) {
				want := check.Check{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": float64(1)}}
				if !reflect.DeepEqual(tests[0].Checks[0], want) {
					t.Errorf("check = %#v, want %#v", tests[0].Checks[0], want)
				}
				if tests[1].Criteria != "Pass if: Paris" {
					t.Errorf("criteria = %q", tests[1].Criteria)
				}
			}},
		{"JSON bare array", arr, []string{"one", "two"}, []string{`"one"`, `{"id": "two"`}, []int{1, 1},
			func(t *testing.T, tests []Test) {
				if tests[0].Reference != "2" || tests[1].Messages[0].Content != "2+2?" {
					t.Errorf("tests = %+v", tests)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadBattery(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if ids := testIDs(got); !reflect.DeepEqual(ids, tt.ids) {
				t.Fatalf("ids = %v, want %v", ids, tt.ids)
			}
			for i, at := range tt.sourceAt {
				// The object form's first test opens on the line before its id.
				line := lineOf(t, tt.file, at, tt.sourceNth[i])
				if tt.name == "JSON object" && i == 0 {
					line--
				}
				if want := fmt.Sprintf("%s:%d", tt.file, line); got[i].Source != want {
					t.Errorf("test %d Source = %s, want %s", i, got[i].Source, want)
				}
			}
			tt.assertions(t, got)
		})
	}
}

// The same ten problems, one per test, in TOML and in JSON.
func TestBatteryErrorsNameFileLineAndField(t *testing.T) {
	t.Parallel()
	type row struct {
		field string
		at    string
		nth   int
		subs  []string
		first int // nonzero for a duplicate, whose message must name the first one's Source
	}
	for _, format := range []struct {
		file string
		rows []row
	}{
		{filepath.Join("testdata", "batteries", "bad_tests.toml"), []row{
			{"tests[0].id", "[[tests]]", 1, []string{"test #1 has no id"}, 0},
			{"tests[1]", "[[tests]]", 2, []string{`"no-prompt" has no prompt`, "user ="}, 0},
			{"tests[3].id", `id = "dup"`, 2, []string{`duplicate test id "dup"`}, 3},
			{"tests[4].checks[0].type", "containz", 1, []string{`unknown check type "containz"`, "did you mean `contains`?", "max-latency"}, 0},
			{"tests[5].checks[0]", "[[tests.checks]]", 2, []string{"tool-call check without a name"}, 0},
			{"tests[6].checks[0].value", "(unclosed", 1, []string{"bad regex"}, 0},
			{"tests[7].checks[0].value", `value = "fast"`, 1, []string{`max-latency "fast"`}, 0},
			{"tests[8].tool_choice", `"always"`, 1, []string{`unknown tool_choice "always"`, "auto, none, required"}, 0},
			{"tests[9].critera", "critera", 1, []string{`unknown key "critera"`, "did you mean `criteria`?"}, 0},
		}},
		{filepath.Join("testdata", "batteries", "bad_tests.json"), []row{
			{"tests[0].id", `{"user": "no id here"}`, 1, []string{"test #1 has no id"}, 0},
			{"tests[1]", `"no-prompt"`, 1, []string{`"no-prompt" has no prompt`}, 0},
			{"tests[3].id", `"id": "dup"`, 2, []string{`duplicate test id "dup"`}, 5},
			{"tests[4].checks[0].type", "containz", 1, []string{"did you mean `contains`?"}, 0},
			{"tests[5].checks[0]", `"checks": [{"type": "tool-call"}]`, 1, []string{"tool-call check without a name"}, 0},
			{"tests[6].checks[0].value", "(unclosed", 1, []string{"bad regex"}, 0},
			{"tests[7].checks[0].value", `"fast"`, 1, []string{`max-latency "fast"`}, 0},
			{"tests[8].tool_choice", `"always"`, 1, []string{`unknown tool_choice "always"`}, 0},
			{"tests[9].critera", "critera", 1, []string{"did you mean `criteria`?"}, 0},
		}},
	} {
		_, err := LoadBattery(format.file)
		for _, r := range format.rows {
			t.Run(filepath.Ext(format.file)+" "+r.field, func(t *testing.T) {
				subs := r.subs
				if r.first > 0 {
					// The message names where the first one is too: its [[tests]] line in TOML, its { line in JSON.
					at, nth := "[[tests]]", 3
					if filepath.Ext(format.file) == ".json" {
						at, nth = `"id": "dup"`, 1
					}
					subs = append(subs, fmt.Sprintf("%s:%d", format.file, lineOf(t, format.file, at, nth)))
				}
				wantErr(t, err, format.file, lineOf(t, format.file, r.at, r.nth), r.field, subs...)
			})
		}
	}
}

func TestBatterySyntaxErrorsGiveTheLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		at   string
		subs []string
	}{
		{filepath.Join("testdata", "batteries", "bad_syntax.toml"), "user = hi", []string{"TOML syntax"}},
		{filepath.Join("testdata", "batteries", "bad_syntax.json"), `"user": "hi",}`, []string{"invalid JSON"}},
		{filepath.Join("testdata", "batteries", "bad_lines.jsonl"), `"broken"`, []string{"invalid JSON"}},
		{filepath.Join("testdata", "batteries", "bad_syntax.yaml"), `"unclosed`, []string{"YAML: found unexpected end"}},
		{filepath.Join("testdata", "batteries", "bad_lines.jsonl"), `"input": 42`, []string{"input is neither a string nor a list"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file)+" "+tt.at, func(t *testing.T) {
			_, err := LoadBattery(tt.file)
			var field string
			if tt.at == `"input": 42` {
				field = "input"
			}
			wantErr(t, err, tt.file, lineOf(t, tt.file, tt.at, 1), field, tt.subs...)
		})
	}
}

func TestBatteryValidationOfRequestShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		test  Test
		field string
		sub   string
	}{
		{"unknown role", Test{ID: "a", Messages: []chat.Message{{Role: "robot", Content: "y"}}},
			"tests[0].messages[0].role", `unknown message role "robot"`},
		{"required without tools", Test{ID: "a", User: "x", ToolChoice: "required"},
			"tests[0].tool_choice", "no tools"},
		{"named choice not among tools", Test{ID: "a", User: "x", Tools: tools("get_weather"),
			ToolChoice: map[string]any{"type": "function", "function": map[string]any{"name": "get_wether"}}},
			"tests[0].tool_choice", "did you mean `get_weather`?"},
		{"malformed table choice", Test{ID: "a", User: "x", Tools: tools("f"), ToolChoice: map[string]any{"fn": "f"}},
			"tests[0].tool_choice", "must name a function"},
		{"tool-call of an undefined tool", Test{ID: "a", User: "x", Tools: tools("get_weather"),
			Checks: []check.Check{{Type: "tool-call", Name: "get_wether"}}},
			"tests[0].checks[0].name", "did you mean `get_weather`?"},
		{"tool-call with no tools offered", Test{ID: "a", User: "x", Checks: []check.Check{{Type: "tool-call", Name: "f"}}},
			"tests[0].checks[0]", "offers no tools"},
		{"contains without value", Test{ID: "a", User: "x", Checks: []check.Check{{Type: "not-contains"}}},
			"tests[0].checks[0]", "not-contains check without a value"},
		{"json-schema without schema", Test{ID: "a", User: "x", Checks: []check.Check{{Type: "json-schema"}}},
			"tests[0].checks[0]", "without a schema"},
		{"schema the judge cannot compile", Test{ID: "a", User: "x", Checks: []check.Check{{Type: "json-schema", Schema: map[string]any{"type": float64(5)}}}},
			"tests[0].checks[0]", "bad schema"},
		{"duplicate tool", Test{ID: "a", User: "x", Tools: tools("f", "f")},
			"tests[0].tools[1].function.name", `tool "f" is defined twice`},
		{"unknown response format", Test{ID: "a", User: "x", ResponseFormat: &chat.ResponseFormat{Type: "yaml"}},
			"tests[0].response_format.type", `unknown response_format type "yaml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateTests([]Test{tt.test}, NewSource("b.toml")).Err()
			wantErr(t, err, "b.toml", 0, tt.field, tt.sub)
		})
	}
}

func TestEmptyBatteryIsAnError(t *testing.T) {
	t.Parallel()
	err := validateTests(nil, NewSource("b.toml")).Err()
	wantErr(t, err, "b.toml", 0, "tests", "no tests")
}

// The format comes from the content: an extension pitwall does not know
// is no obstacle, and a file that is no battery says what it is.
func TestBatteryFormatIsToldByContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		file string
		ids  []string
	}{
		{"JSON in a .txt", write("a.txt", `{"tests": [{"id": "a", "user": "hi"}]}`), []string{"a"}},
		{"JSONL in a .json", write("b.json", "{\"id\": \"a\", \"user\": \"hi\"}\n{\"id\": \"b\", \"user\": \"yo\"}\n"), []string{"a", "b"}},
		{"prompt-prix JSON in a .jsonl", write("c.jsonl", `{"prompts": [{"id": "a", "user": "hi"}]}`), []string{"a"}},
		{"one prompt-prix line in a .json", write("d.json", `{"id": "a", "user": "hi"}`), []string{"a"}},
		{"TOML without an extension", write("e", "[[tests]]\nid = \"a\"\nuser = \"hi\"\n"), []string{"a"}},
		{"YAML in a .cfg", write("f.cfg", "prompts: [\"{{q}}\"]\ntests:\n  - vars: {q: hi}\n"), []string{"test-1"}},
		{"an inspect array", write("g.json", `[{"input": "hi", "target": "yo"}]`), []string{"g-1"}},
		{"a BFCL array", write("h.json", `[{"id": "simple_1", "question": [{"role": "user", "content": "hi"}], "function": [{"name": "f"}]}]`), []string{"simple_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadBattery(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if ids := testIDs(got); !reflect.DeepEqual(ids, tt.ids) {
				t.Errorf("ids = %v, want %v", ids, tt.ids)
			}
		})
	}
	_, err := LoadBattery(filepath.Join("testdata", "good", "minimal.toml") + ".txt")
	wantErr(t, err, filepath.Join("testdata", "good", "minimal.toml")+".txt", 0, "", "cannot read battery")
	_, err = LoadBattery(write("empty.json", "  \n"))
	wantErr(t, err, filepath.Join(dir, "empty.json"), 0, "", "empty")
}

func tools(names ...string) []chat.Tool {
	var out []chat.Tool
	for _, n := range names {
		out = append(out, chat.Tool{Type: "function", Function: chat.FunctionDef{Name: n}})
	}
	return out
}
