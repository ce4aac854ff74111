package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"pitwall/gpu/chat"
	"pitwall/judge/check"
)

// LoadBattery reads a battery file. Its format is told from its content,
// the extension only breaking ties (a .txt holding JSON is read as JSON):
//
//	TOML         native: [[tests]] tables
//	JSON         native ({"tests": [...]} or a bare array of tests),
//	             prompt-prix's {"prompts": [...]}, or an array of inspect
//	             samples or BFCL entries, told apart by shape
//	JSONL        one object per line: prompt-prix prompts, inspect samples
//	             ({"input", "target"}) or BFCL entries ({"question",
//	             "function"}), told apart per line
//	YAML         a promptfoo config (prompts × tests)
//
// Only the native formats are config's own; the others are read by the
// edges that register them (RegisterFormat), which cli links.
//
// A file that is something else pitwall knows (a results export, a pitwall
// config, a ground-truth file) is refused with a message saying what it is
// and what to do with it.
//
// Every test is validated; all problems come back at once, as Errors.
//
// The files a battery names (a promptfoo file://) must be in its folder
// (File.ReadRef); a config's allow_outside_files lifts that, and Load
// passes it on.
func LoadBattery(path string) ([]Test, error) {
	tests, _, err := loadBattery(path)
	if err != nil {
		return nil, asErrors(err).Err()
	}
	return tests, nil
}

// loadBattery is LoadBattery that also returns warnings: what the file
// asked for that pitwall loads but will not do as written, once per kind.
func loadBattery(path string) ([]Test, []string, error) {
	return loadBatteryFiles(path, false)
}

// loadBatteryFiles is loadBattery whose battery may name files outside its
// folder when outside is set (allow_outside_files).
func loadBatteryFiles(path string, outside bool) ([]Test, []string, error) {
	// sniffFormat parses to tell the format: no parser may see a file
	// nested past the cap (BurntSushi/toml recurses once per level).
	data, rerr := readDocument(path, "brackets", "battery", "check the battery path")
	if rerr != nil {
		return nil, nil, rerr
	}
	format, err := sniffFormat(path, data)
	if err != nil {
		return nil, nil, err
	}
	if e := nestingError(path, data, format.nesting()); e != nil {
		return nil, nil, e
	}
	n := newNotes(path)
	file := File{Path: path, Data: data, Notes: n, Outside: outside}
	var tests []Test
	switch format {
	case formatTOML:
		tests, err = loadNativeTOML(path, data, n)
	case formatJSON:
		tests, err = loadJSON(file)
	case formatJSONL:
		tests, err = loadJSONL(path, data, n)
	default:
		tests, err = loadForeign(file)
	}
	return tests, n.list(), err
}

// loadForeign reads a file that is neither JSON nor TOML with the
// registered Format that claims it.
func loadForeign(f File) ([]Test, error) {
	format, err := formatFor(f)
	if err != nil {
		return nil, err
	}
	if format != nil {
		return format.Load(f)
	}
	if ext := strings.ToLower(filepath.Ext(f.Path)); ext == ".yaml" || ext == ".yml" {
		return nil, &Error{File: f.Path, Line: 1, Msg: "a YAML battery is a promptfoo config, and this program links no reader of promptfoo's format",
			Hint: "build pitwall with edges/promptfoo (cli links it), or write the battery as TOML or JSON"}
	}
	return nil, &Error{File: f.Path, Line: 1, Msg: "not a battery: the file is neither JSON, JSONL, TOML nor YAML",
		Hint: "a battery is native TOML or JSON, prompt-prix JSON or JSONL, BFCL or inspect JSONL, or a promptfoo YAML config"}
}

// rawBattery is the native format as written.
type rawBattery struct {
	Name        string    `toml:"name" json:"name"`
	Description string    `toml:"description" json:"description"`
	Tests       []RawTest `toml:"tests" json:"tests"`
}

// RawTest is one native test as written; ToTest turns it into a Test and
// Problems says what it could not convert. A format whose tests are native
// ones under other names (prompt-prix's) fills one in.
type RawTest struct {
	ID             string             `toml:"id" json:"id"`
	Name           string             `toml:"name" json:"name"`
	Category       string             `toml:"category" json:"category"`
	Severity       string             `toml:"severity" json:"severity"`
	System         string             `toml:"system" json:"system"`
	User           string             `toml:"user" json:"user"`
	Messages       []RawMessage       `toml:"messages" json:"messages"`
	Tools          []chat.Tool        `toml:"tools" json:"tools"`
	ToolChoice     any                `toml:"tool_choice" json:"tool_choice"`
	ResponseFormat *RawResponseFormat `toml:"response_format" json:"response_format"`
	Criteria       string             `toml:"criteria" json:"criteria"`
	PassCriteria   string             `toml:"pass_criteria" json:"pass_criteria"`
	FailCriteria   string             `toml:"fail_criteria" json:"fail_criteria"`
	Reference      string             `toml:"reference" json:"reference"`
	ExpectVerdict  string             `toml:"expect" json:"expect"` // named apart from judge batteries' Expect, which judgebattery.go merges with these fields
	Checks         []check.Check      `toml:"checks" json:"checks"`
	Mode           string             `toml:"mode" json:"mode"`
	MaxIterations  int                `toml:"max_iterations" json:"max_iterations"`
	MockTools      any                `toml:"mock_tools" json:"mock_tools"` // read by mockTools
}

// RawResponseFormat is chat.ResponseFormat, also accepting OpenAI's nesting
// of the schema under json_schema so a request body can be pasted as is.
type RawResponseFormat struct {
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

func loadNativeTOML(path string, data []byte, n *Notes) ([]Test, error) {
	text := string(data)
	var generic map[string]any
	if _, err := toml.Decode(text, &generic); err != nil {
		return nil, tomlError(path, err)
	}
	if e := NotABattery(path, 1, generic); e != nil {
		return nil, e
	}
	src := locateTOML(path, text)
	col := NewCollector(src)
	checkShape(col, generic, reflect.TypeFor[rawBattery](), "toml", "")
	var rb rawBattery
	if _, err := toml.Decode(text, &rb); err != nil {
		// checkShape has named each value of the wrong type, which is all
		// the decoder can complain of, in words of the file's own.
		if len(col.Errs) == 0 {
			col.Errs = append(col.Errs, tomlError(path, err))
		}
		return nil, col.Errs.Err()
	}
	return finishNative(rb.Tests, src, col, n)
}

// loadJSON reads a JSON battery: native, or a registered format's (a
// top-level object ClaimsJSON takes, prompt-prix's; an array of records or
// a record alone, inspect's or BFCL's).
func loadJSON(f File) ([]Test, error) {
	path, data, n := f.Path, f.Data, f.Notes
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	if e := NotABattery(path, 1, top); e != nil {
		return nil, e
	}
	var (
		root  string
		shape reflect.Type
		into  any
		rb    rawBattery
	)
	switch t := top.(type) {
	case []any:
		if f := arrayFormatFor(t); f != nil {
			return loadRecords(path, data, f, n)
		}
		root, shape, into = "tests", reflect.TypeFor[[]RawTest](), &rb.Tests
	case map[string]any:
		switch {
		case t["tests"] != nil:
			root, shape, into = "", reflect.TypeFor[rawBattery](), &rb
		case jsonFormatFor(t) != nil:
			return jsonFormatFor(t).Load(f)
		case recordFormatFor(t) != nil:
			return loadRecords(path, data, recordFormatFor(t), n)
		default:
			return nil, &Error{File: path, Line: 1,
				Msg:  "not a battery: expected {\"tests\": [...]}, a bare array of tests, or prompt-prix's {\"prompts\": [...]}; this object has " + keyList(t),
				Hint: "see docs/batteries.md, A test"}
		}
	default:
		return nil, &Error{File: path, Line: 1, Msg: "not a battery: the file holds " + Describe(top, "json") + ", not tests",
			Hint: "a JSON battery is {\"tests\": [...]} or an array of tests"}
	}
	src, err := LocateJSON(path, data, 0, root)
	if err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	col := NewCollector(src)
	checkShape(col, top, shape, "json", root)
	if err := json.Unmarshal(data, into); err != nil {
		if len(col.Errs) == 0 {
			col.Errs = append(col.Errs, JSONDecodeError(path, data, 0, err))
		}
		return nil, col.Errs.Err()
	}
	return finishNative(rb.Tests, src, col, n)
}

// finishNative converts and validates decoded native tests, adding any
// problems to those checkShape already found.
func finishNative(raw []RawTest, src *Source, col *Collector, n *Notes) ([]Test, error) {
	tests := make([]Test, len(raw))
	for i, rt := range raw {
		base := IndexPath("tests", i)
		tests[i] = rt.ToTest()
		tests[i].Source = fmt.Sprintf("%s:%d", src.File, src.Line(base))
		for _, p := range rt.Problems() {
			col.Add(Under(base, p.Field), p.Hint, "test %q: %s", tests[i].ID, p.Msg)
		}
	}
	return FinishTests(tests, src, col.Errs, n)
}
