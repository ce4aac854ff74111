package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// LoadBattery reads a battery file, choosing the format by extension:
//
//	.toml        native: [[tests]] tables
//	.json        native ({"tests": [...]} or a bare array of tests), or
//	             prompt-prix's {"prompts": [...]}, told apart by shape
//	.jsonl       one object per line: prompt-prix prompts, or inspect
//	             samples ({"input", "target"}), told apart per line
//	.yaml, .yml  a promptfoo config (prompts × tests)
//
// Every test is validated; all problems come back at once, as Errors.
func LoadBattery(path string) ([]Test, error) {
	tests, _, err := loadBattery(path)
	if err != nil {
		return nil, asErrors(err).err()
	}
	return tests, nil
}

// loadBattery is LoadBattery that also returns warnings: things the file
// asked for that pitwall will not do.
func loadBattery(path string) ([]Test, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, &Error{File: path, Msg: fmt.Sprintf("cannot read battery: %v", err),
			Hint: "check the battery path"}
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".toml":
		tests, err := loadNativeTOML(path, data)
		return tests, nil, err
	case ".json":
		return loadJSON(path, data)
	case ".jsonl":
		tests, err := loadJSONL(path, data)
		return tests, nil, err
	case ".yaml", ".yml":
		return loadPromptfoo(path, data)
	default:
		return nil, nil, &Error{File: path, Msg: fmt.Sprintf("unknown battery format %q", ext),
			Hint: "a battery is .toml, .json, .jsonl, .yaml or .yml"}
	}
}

// rawBattery is the native format as written.
type rawBattery struct {
	Name        string    `toml:"name" json:"name"`
	Description string    `toml:"description" json:"description"`
	Tests       []rawTest `toml:"tests" json:"tests"`
}

// rawTest is one native test as written; toTest turns it into a Test.
type rawTest struct {
	ID             string             `toml:"id" json:"id"`
	Name           string             `toml:"name" json:"name"`
	Category       string             `toml:"category" json:"category"`
	System         string             `toml:"system" json:"system"`
	User           string             `toml:"user" json:"user"`
	Messages       []chat.Message     `toml:"messages" json:"messages"`
	Tools          []chat.Tool        `toml:"tools" json:"tools"`
	ToolChoice     any                `toml:"tool_choice" json:"tool_choice"`
	ResponseFormat *rawResponseFormat `toml:"response_format" json:"response_format"`
	Criteria       string             `toml:"criteria" json:"criteria"`
	PassCriteria   string             `toml:"pass_criteria" json:"pass_criteria"`
	FailCriteria   string             `toml:"fail_criteria" json:"fail_criteria"`
	Reference      string             `toml:"reference" json:"reference"`
	Checks         []check.Check      `toml:"checks" json:"checks"`
}

// rawResponseFormat is chat.ResponseFormat, also accepting OpenAI's nesting
// of the schema under json_schema so a request body can be pasted as is.
type rawResponseFormat struct {
	Type       string `toml:"type" json:"type"`
	Name       string `toml:"name" json:"name"`
	Schema     any    `toml:"schema" json:"schema"`
	Strict     bool   `toml:"strict" json:"strict"`
	JSONSchema *struct {
		Name   string `toml:"name" json:"name"`
		Schema any    `toml:"schema" json:"schema"`
		Strict bool   `toml:"strict" json:"strict"`
	} `toml:"json_schema" json:"json_schema"`
}

func loadNativeTOML(path string, data []byte) ([]Test, error) {
	text := string(data)
	var generic map[string]any
	if _, err := toml.Decode(text, &generic); err != nil {
		return nil, tomlError(path, err)
	}
	src := locateTOML(path, text)
	col := newCollector(src)
	checkShape(col, generic, reflect.TypeFor[rawBattery](), "toml", "")
	var rb rawBattery
	if _, err := toml.Decode(text, &rb); err != nil {
		return nil, Errors(append(col.errs, tomlError(path, err))).err()
	}
	return finishNative(rb.Tests, src, col)
}

// loadJSON reads a native JSON battery, or hands a prompt-prix one to its
// importer.
func loadJSON(path string, data []byte) ([]Test, []string, error) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, nil, jsonSyntaxError(path, data, 0, err)
	}
	shapeErr := &Error{File: path, Line: 1,
		Msg:  "not a battery: expected {\"tests\": [...]}, a bare array of tests, or prompt-prix's {\"prompts\": [...]}",
		Hint: "see README.md, Battery format"}
	var (
		root  string
		shape reflect.Type
		into  any
		rb    rawBattery
	)
	switch t := top.(type) {
	case []any:
		root, shape, into = "tests", reflect.TypeFor[[]rawTest](), &rb.Tests
	case map[string]any:
		switch {
		case t["tests"] != nil:
			root, shape, into = "", reflect.TypeFor[rawBattery](), &rb
		case t["prompts"] != nil:
			tests, err := importPromptPrixJSON(path, data)
			return tests, nil, err
		default:
			return nil, nil, shapeErr
		}
	default:
		return nil, nil, shapeErr
	}
	src, err := locateJSON(path, data, 0, root)
	if err != nil {
		return nil, nil, jsonSyntaxError(path, data, 0, err)
	}
	col := newCollector(src)
	checkShape(col, top, shape, "json", root)
	if err := json.Unmarshal(data, into); err != nil {
		return nil, nil, Errors(append(col.errs, jsonSyntaxError(path, data, 0, err))).err()
	}
	tests, err := finishNative(rb.Tests, src, col)
	return tests, nil, err
}

// finishNative converts and validates decoded native tests, adding any
// problems to those checkShape already found.
func finishNative(raw []rawTest, src *source, col *collector) ([]Test, error) {
	tests := make([]Test, len(raw))
	for i, rt := range raw {
		tests[i] = rt.toTest()
		tests[i].Source = fmt.Sprintf("%s:%d", src.file, src.line(indexPath("tests", i)))
	}
	errs := append(col.errs, validateTests(tests, src)...)
	if err := errs.err(); err != nil {
		return nil, err
	}
	return tests, nil
}

// toTest folds the accepted spellings into one Test and gives values from
// TOML and JSON the same Go types (numbers float64, objects map[string]any),
// so a check's args compare alike whichever format they came from.
func (rt rawTest) toTest() Test {
	t := Test{
		ID:         strings.TrimSpace(rt.ID),
		Name:       rt.Name,
		Category:   rt.Category,
		System:     rt.System,
		User:       rt.User,
		Messages:   rt.Messages,
		ToolChoice: normalizeToolChoice(rt.ToolChoice),
		Criteria:   foldCriteria(rt.Criteria, rt.PassCriteria, rt.FailCriteria),
		Reference:  rt.Reference,
	}
	for _, tool := range rt.Tools {
		if tool.Type == "" {
			tool.Type = "function"
		}
		tool.Function.Parameters = jsonNormalize(tool.Function.Parameters)
		t.Tools = append(t.Tools, tool)
	}
	for _, c := range rt.Checks {
		c.Type = strings.ToLower(strings.TrimSpace(c.Type))
		if c.Args != nil {
			c.Args, _ = jsonNormalize(c.Args).(map[string]any)
		}
		c.Schema = jsonNormalize(c.Schema)
		t.Checks = append(t.Checks, c)
	}
	if rf := rt.ResponseFormat; rf != nil {
		f := &chat.ResponseFormat{Type: rf.Type, Name: rf.Name, Schema: rf.Schema, Strict: rf.Strict}
		if js := rf.JSONSchema; js != nil {
			f.Name, f.Schema, f.Strict = js.Name, js.Schema, js.Strict
		}
		f.Schema = jsonNormalize(f.Schema)
		t.ResponseFormat = f
	}
	return t
}

// foldCriteria joins criteria with pass_criteria and fail_criteria, which
// prompt-prix and others write apart.
func foldCriteria(criteria, pass, fail string) string {
	var parts []string
	if s := strings.TrimSpace(criteria); s != "" {
		parts = append(parts, s)
	}
	if s := strings.TrimSpace(pass); s != "" {
		parts = append(parts, "Pass if: "+s)
	}
	if s := strings.TrimSpace(fail); s != "" {
		parts = append(parts, "Fail if: "+s)
	}
	return strings.Join(parts, "\n")
}

// normalizeToolChoice turns the short table {name = "f"} into OpenAI's
// {"type": "function", "function": {"name": "f"}}; anything else is kept for
// validation to judge.
func normalizeToolChoice(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if name, ok := m["name"].(string); ok && len(m) == 1 {
		return map[string]any{"type": "function", "function": map[string]any{"name": name}}
	}
	return jsonNormalize(m)
}

// toolChoiceName returns the function a table tool_choice names.
func toolChoiceName(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["type"] != "function" || len(m) != 2 {
		return "", false
	}
	fn, ok := m["function"].(map[string]any)
	if !ok {
		return "", false
	}
	name, ok := fn["name"].(string)
	return name, ok && name != ""
}

// jsonNormalize round-trips v through JSON, so TOML's int64s become
// float64s, its dates strings, and YAML's maps map[string]any.
func jsonNormalize(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
