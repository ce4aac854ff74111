package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// loadJSONL reads one test per line. Each line is told apart by its keys
// (recordKind): an inspect sample, a BFCL entry or a prompt-prix prompt.
// Blank lines are skipped; a line's problems name that line.
func loadJSONL(path string, data []byte, n *Notes) ([]Test, error) {
	src := NewSource(path)
	col := NewCollector(src)
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var tests []Test
	records := 0 // lines read as records, whether or not they made a test
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), maxInputBytes+1)
	for ln := 1; sc.Scan(); ln++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			e := jsonSyntaxError(path, line, ln-1, err)
			e.Line = ln // a line of JSONL is all one record
			col.Errs = append(col.Errs, e)
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			col.AddAt(ln, "", "each line of a JSONL battery is one test, a JSON object", "line %d is %s, not a test", ln, Describe(v, "json"))
			continue
		}
		if len(tests) == 0 {
			if e := NotABattery(path, ln, m); e != nil {
				return nil, e
			}
		}
		at := IndexPath("tests", records)
		records++
		src.Set(at, ln)
		t, ok := recordTest(col, n, recordKind(m), m, fmt.Sprintf("%s-%d", stem, records), at)
		if !ok {
			continue
		}
		t.Source = fmt.Sprintf("%s:%d", path, ln)
		tests = append(tests, t)
	}
	if err := sc.Err(); err != nil {
		col.Errs = append(col.Errs, &Error{File: path, Msg: fmt.Sprintf("cannot read battery: %v", err)})
	}
	if len(col.Errs) > 0 {
		return nil, lineFields(col.Errs).Err()
	}
	tests, err := FinishTests(tests, src, nil, n)
	return tests, lineFields(asErrors(err)).Err()
}

// lineFields drops the tests[k] that starts a JSONL error's field: its line
// names the record, and the file has no key called tests.
func lineFields(errs Errors) Errors {
	for _, e := range errs {
		if strings.HasPrefix(e.Field, "tests[") {
			if i := strings.IndexByte(e.Field, ']'); i > 0 {
				e.Field = strings.TrimPrefix(e.Field[i+1:], ".")
			}
		}
	}
	return errs
}

// loadRecords reads a JSON file that holds records rather than a battery
// object: an array of inspect samples or BFCL entries, or one record alone.
func loadRecords(path string, data []byte, kind string, n *Notes) ([]Test, error) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	records, isList := top.([]any)
	root := "tests"
	if !isList {
		records, root = []any{top}, "tests[0]"
	}
	src, err := locateJSON(path, data, 0, root)
	if err != nil {
		return nil, jsonSyntaxError(path, data, 0, err)
	}
	col := NewCollector(src)
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var tests []Test
	for i, r := range records {
		at := IndexPath("tests", i)
		m, ok := r.(map[string]any)
		if !ok {
			col.Add(at, "each element is one test, a JSON object", "element %d is %s, not a test", i+1, Describe(r, "json"))
			continue
		}
		k := recordKind(m)
		if k == "" {
			k = kind
		}
		t, ok := recordTest(col, n, k, m, fmt.Sprintf("%s-%d", stem, i+1), at)
		if !ok {
			continue
		}
		t.Source = fmt.Sprintf("%s:%d", path, src.Line(at))
		tests = append(tests, t)
	}
	if len(col.Errs) > 0 {
		return nil, col.Errs.Err()
	}
	return FinishTests(tests, src, nil, n)
}

// recordTest converts one record of the given kind; ok is false when its
// problems were reported and there is no test.
func recordTest(col *Collector, n *Notes, kind string, m map[string]any, fallbackID, at string) (Test, bool) {
	switch kind {
	case recordInspect:
		return inspectTest(col, n, m, fallbackID, at)
	case recordBFCL:
		return bfclTest(col, n, m, fallbackID, at)
	}
	return promptPrixTest(col, n, m, at)
}

// inspectSample is one sample of an inspect dataset.
type inspectSample struct {
	ID       any            `json:"id"` // string or number; optional
	Input    any            `json:"input"`
	Target   any            `json:"target"` // string or list of acceptable answers
	Choices  []string       `json:"choices"`
	Metadata map[string]any `json:"metadata"`
}

var inspectKeys = []string{"id", "input", "target", "choices", "metadata", "sandbox", "files", "setup"}

func inspectTest(col *Collector, n *Notes, m map[string]any, fallbackID, at string) (Test, bool) {
	b, err := json.Marshal(m)
	var s inspectSample
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		col.Add(at, `an inspect sample is {"id", "input", "target", "choices", "metadata"}`, "cannot read the sample: %s", JSONDecodeError(col.Src.File, b, 0, err).Msg)
		return Test{}, false
	}
	t, field, msg := s.toTest(fallbackID)
	if msg != "" {
		col.Add(Under(at, field), `input is a string or a list of {"role", "content"} messages`, "%s", msg)
		return Test{}, false
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(inspectKeys, k) {
			n.Add(fmt.Sprintf("inspect sample key %q is not read", k), t.ID)
		}
	}
	for _, k := range []string{"sandbox", "files", "setup"} {
		if _, ok := m[k]; ok {
			n.Add(fmt.Sprintf("inspect sample's %s is not provided: the model sees only the input", k), t.ID)
		}
	}
	return t, true
}

// toTest maps a sample onto a Test: input becomes the prompt, target the
// reference the judge compares against. A sample without an id gets
// fallbackID. msg says what is wrong with the input (at field), if anything.
func (s inspectSample) toTest(fallbackID string) (t Test, field, msg string) {
	t = Test{ID: fallbackID}
	switch id := s.ID.(type) {
	case string:
		if id != "" {
			t.ID = id
		}
	case float64:
		t.ID = fmt.Sprintf("%g", id)
	}
	if c, ok := s.Metadata["category"].(string); ok {
		t.Category = c
	}
	if sev, ok := s.Metadata["severity"].(string); ok {
		t.Severity = strings.ToLower(strings.TrimSpace(sev))
	}
	switch in := s.Input.(type) {
	case string:
		t.User = in
	case []any:
		msgs, probs, ok := DecodeMessages(in)
		if !ok {
			return t, "input", "an input message is not a {\"role\", \"content\"} object"
		}
		if len(probs) > 0 {
			return t, Under("input", strings.TrimPrefix(probs[0].field, "messages")), probs[0].msg
		}
		t.Messages = msgs
		if len(t.Messages) == 1 && t.Messages[0].Role == "user" {
			t.User, t.Messages = t.Messages[0].Content, nil
		}
	default:
		return t, "input", "input is neither a string nor a list of messages"
	}
	if len(s.Choices) > 0 {
		var b strings.Builder
		b.WriteString("\n\n")
		for i, c := range s.Choices {
			fmt.Fprintf(&b, "%s) %s\n", choiceLabel(i), c)
		}
		if t.User != "" {
			t.User += strings.TrimRight(b.String(), "\n")
		} else if n := len(t.Messages); n > 0 {
			t.Messages[n-1].Content += strings.TrimRight(b.String(), "\n")
		}
	}
	switch tg := s.Target.(type) {
	case string:
		t.Reference = tg
	case []any:
		var parts []string
		for _, x := range tg {
			if str, ok := x.(string); ok {
				parts = append(parts, str)
			}
		}
		if len(parts) == 1 {
			t.Reference = parts[0]
		} else if len(parts) > 1 {
			t.Reference = "Any of these is correct:\n" + strings.Join(parts, "\n")
		}
	}
	return t, "", ""
}

// choiceLabel is A, B, … Z, then AA, AB, … as inspect letters its choices.
func choiceLabel(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}
