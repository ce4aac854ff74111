package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// loadJSONL reads one test per line. Each line is read by the registered
// format that claims it (an inspect sample, a BFCL entry), else by the one
// whose records are JSONL's lines (a prompt-prix prompt). Blank lines are
// skipped; a line's problems name that line.
func loadJSONL(path string, data []byte, n *Notes) ([]Test, error) {
	src := NewSource(path)
	col := NewCollector(src)
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var tests []Test
	lines := linesFormat()
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
		t, ok := recordTest(col, n, lines, m, fmt.Sprintf("%s-%d", stem, records), at)
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
// object: an array of a format's records (an element no format claims is
// read by format), or one record alone.
func loadRecords(path string, data []byte, format *Format, n *Notes) ([]Test, error) {
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
	src, err := LocateJSON(path, data, 0, root)
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
		t, ok := recordTest(col, n, format, m, fmt.Sprintf("%s-%d", stem, i+1), at)
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

// recordTest reads one record with format, the one that claims it or else
// fallback; ok is false when its problems were reported and there is no
// test.
func recordTest(col *Collector, n *Notes, fallback *Format, m map[string]any, fallbackID, at string) (Test, bool) {
	f := recordFormatFor(m)
	if f == nil {
		f = fallback
	}
	if f == nil {
		// Only a program that links none of the edges cli links gets here:
		// prompt-prix reads every JSONL line that no other format claims.
		col.Add(at, "build pitwall with the edges cli links (edges/promptprix, edges/bfcl, edges/inspect), or write the battery as TOML or JSON {\"tests\": [...]}",
			"a test of one object per line or element is prompt-prix's, BFCL's or inspect's, and this program links no reader of it (it has %s)", keyList(m))
		return Test{}, false
	}
	return f.Records.Read(Record{Fields: m, ID: fallbackID, At: at, Col: col, Notes: n})
}
