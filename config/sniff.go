package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// batteryFormat is how a battery file is written, told from its content.
type batteryFormat int

const (
	formatTOML batteryFormat = iota
	formatJSON
	formatJSONL
	formatOther // neither JSON, JSONL nor TOML: a registered Format's
)

// nesting is the format's name for nestingError.
func (f batteryFormat) nesting() string {
	switch f {
	case formatTOML:
		return "toml"
	case formatJSON:
		return "json"
	case formatJSONL:
		return "jsonl"
	}
	return "" // a Format's own: nestingError has checked brackets
}

// sniffFormat tells a battery's format from its content:
//
//  1. text that opens with { is JSON (a TOML file cannot open so), and so
//     is text that opens with [ and parses as JSON (a TOML table header
//     does not): one value is a JSON file, several (one per line) JSONL,
//     and a .jsonl file of one line is JSONL unless that line is a whole
//     battery ({"prompts": ...} or {"tests": ...});
//  2. JSON that does not parse is JSONL when two or more lines open with
//     {, else JSON (whose syntax error then names the line), unless the
//     extension says TOML or YAML;
//  3. other text is TOML when the extension says so or it parses as TOML,
//     unless the extension is a registered Format's; anything else is
//     formatOther, for the registered formats to claim (loadForeign).
func sniffFormat(path string, data []byte) (batteryFormat, error) {
	ext := strings.ToLower(filepath.Ext(path))
	body := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(body) == 0 {
		return 0, &Error{File: path, Msg: "the battery file is empty", Hint: "a battery holds at least one test"}
	}
	if body[0] == '{' || body[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(body))
		var v json.RawMessage
		err := dec.Decode(&v)
		switch {
		case err == nil:
			if _, err := dec.Token(); err == nil {
				return formatJSONL, nil
			}
			var top map[string]any
			if ext == ".jsonl" && json.Unmarshal(v, &top) == nil && top["prompts"] == nil && top["tests"] == nil {
				return formatJSONL, nil
			}
			return formatJSON, nil
		case ext == ".jsonl" || objectLines(body) >= 2:
			return formatJSONL, nil
		case ext == ".json" || (body[0] == '{' && ext != ".yaml" && ext != ".yml"):
			return formatJSON, nil
		}
	}
	switch {
	case ext == ".toml":
		return formatTOML, nil
	case ext == ".json" || ext == ".jsonl":
		return formatJSON, nil // not JSON after all: loadJSON says where
	case slices.Contains(formatExts(), ext):
		return formatOther, nil
	}
	var t map[string]any
	if _, err := toml.Decode(string(data), &t); err == nil {
		return formatTOML, nil
	}
	return formatOther, nil
}

// objectLines counts the lines that open with {.
func objectLines(data []byte) int {
	n := 0
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '{' {
			n++
		}
	}
	return n
}

// A file that is not a battery, recognised: what it is, and what to do.
type lookalike struct {
	what, hint string
}

// identify recognises the files people point battery = at by mistake:
// finished runs other tools wrote, pitwall's own config and exports, and
// ground-truth files that hold answers without the questions.
func identify(top any) *lookalike {
	m, ok := top.(map[string]any)
	if !ok {
		if list, ok := top.([]any); ok && len(list) > 0 {
			if first, ok := list[0].(map[string]any); ok {
				return identifyRecord(first)
			}
		}
		return nil
	}
	has := func(k string) bool { _, ok := m[k]; return ok }
	results, _ := m["results"].([]any)
	switch {
	case has("aggregates") && (has("runs_total") || has("models")):
		return &lookalike{"a prompt-prix consistency export (aggregates of repeated runs)",
			"bring the runs in with `pitwall import FILE --battery BATTERY`, where BATTERY is the battery they ran"}
	case len(results) > 0 && recordHas(results[0], "test_id", "model_id"),
		has("results") && has("models") && isStrings(m["tests"]):
		return &lookalike{"a prompt-prix results export (the tests, models and results of a finished run)",
			"bring the run in with `pitwall import FILE --battery BATTERY`, where BATTERY is the battery it ran"}
	case has("evalId") || recordHas(m["results"], "results", "stats") || recordHas(m["results"], "table"):
		return &lookalike{"a promptfoo results file (promptfoo eval -o results.json)",
			"bring the run in with `pitwall import FILE --battery CONFIG.yaml`; the battery is the promptfoo config it ran"}
	case recordHas(m["eval"], "task") || (has("eval") && (has("samples") || has("stats"))):
		return &lookalike{"an inspect eval log",
			"bring the run in with `pitwall import FILE --battery DATASET.jsonl`; the battery is the dataset it ran"}
	case has("run") && has("cells"):
		return &lookalike{"a pitwall run export (pitwall export --format json)",
			"the run is in the ledger it came from: pitwall show RUN"}
	case !has("tests") && !has("prompts") && (has("servers") || has("battery") || has("scoring") || has("sim")):
		return &lookalike{"a pitwall config",
			"run it with `pitwall run FILE`; a config's battery = names the battery file"}
	}
	if !has("tests") && !has("prompts") {
		return identifyRecord(m)
	}
	// A ground-truth file may hold its answers under tests, as prompt-prix's
	// judge_eval_ground_truth.json does; its records still lack a prompt.
	if tests, ok := m["tests"].([]any); ok && len(tests) > 0 {
		if first, ok := tests[0].(map[string]any); ok {
			return identifyRecord(first)
		}
	}
	return nil
}

// identifyRecord recognises one record (a JSONL line, an array element) of
// a ground-truth file.
func identifyRecord(m map[string]any) *lookalike {
	has := func(k string) bool { _, ok := m[k]; return ok }
	prompt := has("question") || has("user") || has("messages") || has("input") || has("prompt") || has("prompts") || has("tests")
	switch {
	case !prompt && (has("ground_truth") || has("possible_answer")):
		return &lookalike{"a BFCL ground-truth file (possible answers, without the questions)",
			"use the BFCL questions file ({\"id\", \"question\", \"function\"} per line) as the battery"}
	case !prompt && (has("expected_verdict") || has("expected_judgment") || has("human_verdict") || has("gold_verdict") || (has("verdict") && has("id"))):
		return &lookalike{"a judge ground-truth file (expected verdicts, without the prompts and outputs they grade)",
			"a battery needs each test's prompt; for a judge battery add the prompt, the candidate output and expect to each test"}
	}
	return nil
}

func recordHas(v any, keys ...string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

func isStrings(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, e := range list {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

// NotABattery is the error for a file identify recognises, or nil.
func NotABattery(path string, line int, top any) *Error {
	l := identify(top)
	if l == nil {
		return nil
	}
	return &Error{File: path, Line: line, Msg: "this looks like " + l.what + ", not a battery", Hint: l.hint}
}

// keyList names an object's keys for a message: a, b and c.
func keyList(m map[string]any) string {
	keys := sortedKeys(m)
	if len(keys) == 0 {
		return "no keys"
	}
	if len(keys) > 6 {
		keys = append(keys[:6], "…")
	}
	return "the keys " + strings.Join(keys, ", ")
}

// JSONDecodeError is jsonSyntaxError for any decoding error, saying a type
// mismatch in JSON's words ("a string where an object belongs") rather
// than in Go's.
func JSONDecodeError(file string, data []byte, base int, err error) *Error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return jsonSyntaxError(file, data, base, err)
	}
	line := base + newLineIndex(data).line(max(0, int(te.Offset)-1))
	field := te.Field
	msg := fmt.Sprintf("%s where %s belongs", jsonWord(te.Value), jsonTypeWord(te.Type))
	return &Error{File: file, Line: line, Field: field, Msg: msg, Hint: "check the value's type against docs/batteries.md, A test"}
}

func jsonWord(v string) string {
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	if strings.HasPrefix(v, "number") {
		return "a number (" + strings.TrimSpace(strings.TrimPrefix(v, "number")) + ")"
	}
	return "a value"
}

// jsonTypeWord names what a Go type holds in JSON's words.
func jsonTypeWord(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another value"
}
