package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
)

// A judge battery qualifies judges rather than models. Each test is a
// battery test (the prompt, tools, criteria and reference the judge is
// shown) plus the candidate's output, fixed, and the verdict a good judge
// gives it, so qualifying needs no inference:
//
//	[[tests]]
//	id        = "weather-right-call"
//	user      = "What's the weather in Tokyo?"
//	criteria  = "Calls get_weather for Tokyo."
//	reference = '[tool call] get_weather({"city":"Tokyo"})'
//	candidate = ""                         # the reply text ("" for none)
//	candidate_tool_calls = [{ name = "get_weather", arguments = { city = "Tokyo" } }]
//	expect    = "pass"                     # or "fail"
//
// arguments is a table or a JSON string as a model sends it; a string is
// kept as written, so a battery can hold malformed arguments on purpose.
// The file is TOML or JSON ({"tests": [...]} or a bare array), like a
// native battery; checks have no place in it.

// JudgeTest is one test of a judge battery.
type JudgeTest struct {
	Test
	Candidate          string          // the candidate's reply text
	CandidateToolCalls []chat.ToolCall // the tool calls it made
	Expect             scoring.Verdict // scoring.Pass or scoring.Fail
}

// rawJudgeFields are the keys a judge battery's test has beyond a native
// test's. Their shape is checked with the rest (judgeShape); their values
// are read from the generic decoding (judgeFields), so that a value of the
// wrong type is one error among the others rather than the end of the load.
type rawJudgeFields struct {
	Candidate          *string            `toml:"candidate" json:"candidate"`
	CandidateToolCalls []rawCandidateCall `toml:"candidate_tool_calls" json:"candidate_tool_calls"`
	Expect             string             `toml:"expect" json:"expect"`
}

type rawCandidateCall struct {
	ID        string `toml:"id" json:"id"`
	Name      string `toml:"name" json:"name"`
	Arguments any    `toml:"arguments" json:"arguments"`
}

var expects = []string{"pass", "fail"}

// judgeShape is a judge battery's shape, for checkShape: rawBattery whose
// tests have rawJudgeFields' keys as well as RawTest's.
var judgeShape = func() reflect.Type {
	var test []reflect.StructField
	for _, t := range []reflect.Type{reflect.TypeFor[RawTest](), reflect.TypeFor[rawJudgeFields]()} {
		for f := range t.Fields() {
			test = append(test, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		}
	}
	var battery []reflect.StructField
	for f := range reflect.TypeFor[rawBattery]().Fields() {
		if f.Name == "Tests" {
			f.Type = reflect.SliceOf(reflect.StructOf(test))
		}
		battery = append(battery, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
	}
	return reflect.StructOf(battery)
}()

// LoadJudgeBattery reads a judge battery (.toml or .json, or a promptfoo
// judge-competence config, .yaml, read by edges/promptfoo). Every test is
// validated as a battery test and as a judge test; all problems come back
// at once, as Errors naming file, line and field.
func LoadJudgeBattery(path string) ([]JudgeTest, error) {
	tests, _, err := loadJudgeBattery(path)
	return tests, err
}

// loadJudgeBattery is loadJudgeBatteryFiles with the battery's files kept
// in its folder.
func loadJudgeBattery(path string) ([]JudgeTest, []string, error) {
	return loadJudgeBatteryFiles(path, false)
}

// loadJudgeBatteryFiles is LoadJudgeBattery that also returns warnings: what
// the file holds that is not read, once per kind.
//
// outside lets the battery name files outside its folder
// (allow_outside_files).
func loadJudgeBatteryFiles(path string, outside bool) ([]JudgeTest, []string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	syntax := "brackets"
	switch ext {
	case ".toml":
		syntax = "toml"
	case ".json":
		syntax = "json"
	}
	data, rerr := readDocument(path, syntax, "judge battery", "check the battery path")
	if rerr != nil {
		return nil, nil, Errors{rerr}.Err()
	}
	n := newNotes(path)
	var (
		tests []JudgeTest
		err   error
	)
	switch ext {
	case ".toml":
		tests, err = loadJudgeTOML(path, data)
	case ".json":
		tests, err = loadJudgeJSON(path, data)
	default:
		f := judgeFormatFor(path)
		if f == nil {
			err = &Error{File: path, Msg: fmt.Sprintf("unknown judge battery format %q", ext),
				Hint: "a judge battery is .toml or .json, or a promptfoo config (.yaml)"}
			break
		}
		file := File{Path: path, Data: data, Notes: n, Outside: outside}
		if err = f.checkNesting(file); err == nil {
			tests, err = f.LoadJudge(file)
		}
	}
	if err != nil {
		return nil, nil, asErrors(err).Err()
	}
	return tests, n.list(), nil
}

func loadJudgeTOML(path string, data []byte) ([]JudgeTest, error) {
	text := string(data)
	var generic map[string]any
	if _, err := toml.Decode(text, &generic); err != nil {
		return nil, tomlError(path, err)
	}
	src := locateTOML(path, text)
	col := NewCollector(src)
	checkShape(col, generic, judgeShape, "toml", "")
	var rb rawBattery
	if _, err := toml.Decode(text, &rb); err != nil {
		return nil, Errors(append(col.Errs, tomlError(path, err))).Err()
	}
	return finishJudge(rb.Tests, judgeFields(generic["tests"]), src, col)
}

func loadJudgeJSON(path string, data []byte) ([]JudgeTest, error) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	notOne := &Error{File: path, Line: 1, Msg: `not a judge battery: expected {"tests": [...]} or a bare array of tests`,
		Hint: "see the top of examples/judge-battery.toml for the keys a judge test has"}
	var (
		root  string
		tests any
	)
	switch t := top.(type) {
	case []any:
		root, tests, top = "tests", t, map[string]any{"tests": t}
	case map[string]any:
		if t["tests"] == nil {
			return nil, notOne
		}
		tests = t["tests"]
	default:
		return nil, notOne
	}
	src, err := LocateJSON(path, data, 0, root)
	if err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	col := NewCollector(src)
	checkShape(col, top, judgeShape, "json", "")
	var rb rawBattery
	body := data
	if root != "" {
		body = []byte(`{"tests":` + string(data) + `}`)
	}
	if err := json.Unmarshal(body, &rb); err != nil {
		return nil, Errors(append(col.Errs, jsonSyntaxError(path, data, 0, err))).Err()
	}
	return finishJudge(rb.Tests, judgeFields(tests), src, col)
}

// judgeFields reads each test's judge keys from the generic decoding, as
// far as their types allow: checkShape has reported the rest.
func judgeFields(tests any) []rawJudgeFields {
	var out []rawJudgeFields
	for _, t := range asList(tests) {
		m, _ := t.(map[string]any)
		var rj rawJudgeFields
		if c, ok := m["candidate"].(string); ok {
			rj.Candidate = &c
		}
		rj.Expect, _ = m["expect"].(string)
		for _, c := range asList(m["candidate_tool_calls"]) {
			cm, _ := c.(map[string]any)
			call := rawCandidateCall{Arguments: cm["arguments"]}
			call.ID, _ = cm["id"].(string)
			call.Name, _ = cm["name"].(string)
			rj.CandidateToolCalls = append(rj.CandidateToolCalls, call)
		}
		out = append(out, rj)
	}
	return out
}

// asList is a decoded array as []any: JSON gives []any, TOML []any or,
// for an array of tables, []map[string]any.
func asList(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []map[string]any:
		out := make([]any, len(l))
		for i, m := range l {
			out[i] = m
		}
		return out
	}
	return nil
}

// finishJudge converts and validates decoded judge tests.
func finishJudge(rts []RawTest, rjs []rawJudgeFields, src *Source, col *Collector) ([]JudgeTest, error) {
	tests := make([]Test, len(rts))
	for i, rt := range rts {
		tests[i] = rt.ToTest()
		tests[i].Source = fmt.Sprintf("%s:%d", src.File, src.Line(IndexPath("tests", i)))
	}
	errs := append(col.Errs, validateTests(tests, src)...)
	v := NewCollector(src)
	out := make([]JudgeTest, len(tests))
	for i := range tests {
		var rj rawJudgeFields
		if i < len(rjs) {
			rj = rjs[i]
		}
		out[i] = judgeTest(v, tests[i], rj, IndexPath("tests", i))
	}
	if err := append(errs, v.Errs...).Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// judgeTest checks one test's judge fields and builds its JudgeTest.
func judgeTest(v *Collector, t Test, rj rawJudgeFields, base string) JudgeTest {
	at := func(k string) string { return JoinPath(base, k) }
	label := fmt.Sprintf("test %q", t.ID)
	jt := JudgeTest{Test: t}
	if len(t.Checks) > 0 {
		v.Add(at("checks"), "remove them: the candidate's output is fixed, and expect says what a judge should answer",
			"%s: checks have no place in a judge battery", label)
	}
	switch e := strings.ToLower(strings.TrimSpace(rj.Expect)); {
	case e == "":
		v.Add(base, `add expect = "pass" or expect = "fail": the verdict a good judge gives this candidate`, "%s has no expect", label)
	case slices.Contains(expects, e):
		jt.Expect = scoring.Verdict(e)
	default:
		v.Add(at("expect"), DidYouMean(e, expects), "%s: expect must be pass or fail, got %q", label, rj.Expect)
	}
	if rj.Candidate != nil {
		jt.Candidate = *rj.Candidate
	}
	if rj.Candidate == nil && len(rj.CandidateToolCalls) == 0 {
		v.Add(base, `add candidate = "..." (the reply the judge grades; "" for none) or candidate_tool_calls`,
			"%s has no candidate output", label)
	}
	for k, c := range rj.CandidateToolCalls {
		p := IndexPath(at("candidate_tool_calls"), k)
		if strings.TrimSpace(c.Name) == "" {
			v.Add(JoinPath(p, "name"), `add name = "get_weather"`, "%s: candidate tool call has no name", label)
		}
		args, ok := CandidateArgs(c.Arguments)
		if !ok {
			v.Add(JoinPath(p, "arguments"), `write arguments = { city = "Tokyo" }, or a JSON string as a model sends it`,
				"%s: arguments must be a table or a string, got %s", label, Describe(c.Arguments, "toml"))
		}
		jt.CandidateToolCalls = append(jt.CandidateToolCalls, chat.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	}
	return jt
}

// CandidateArgs is a tool call's arguments as a model sends them: a string
// as written, a table as JSON.
func CandidateArgs(v any) (string, bool) {
	switch a := v.(type) {
	case nil:
		return "", true
	case string:
		return a, true
	case map[string]any:
		b, err := json.Marshal(JSONNormalize(a))
		return string(b), err == nil
	}
	return "", false
}
