package importrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// decodeJSON reads data as one JSON value, numbers kept as json.Number. A
// syntax error names its line, in JSON's words.
func decodeJSON(data []byte) (any, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, syntaxError(data, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("line %d: more than one JSON value: an export is one object", lineAt(data, dec.InputOffset()))
	}
	return v, nil
}

func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("line %d: not JSON: %s", lineAt(data, se.Offset), se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not JSON: the file ends before the JSON does (is it cut off?)")
	}
	return fmt.Errorf("not JSON: %v", err)
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:max(off, 0)], []byte("\n")) + 1
}

// obj is a JSON object with its place in the file (results[3]), read with
// errors that say what is wrong in JSON's words.
type obj struct {
	m  map[string]any
	at string
}

func asObj(v any, at string) (obj, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return obj{}, fmt.Errorf("%s: %s where an object belongs", at, jsonKind(v))
	}
	return obj{m, at}, nil
}

func (o obj) has(k string) bool { _, ok := o.m[k]; return ok }

func (o obj) field(k string) string {
	if o.at == "" {
		return k
	}
	return o.at + "." + k
}

func (o obj) wrong(k string, v any, want string) error {
	return fmt.Errorf("%s: %s where %s belongs", o.field(k), jsonKind(v), want)
}

// str reads a string; missing and null read "".
func (o obj) str(k string) (string, error) {
	switch v := o.m[k].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", o.wrong(k, v, "a string")
	}
}

// id reads an id, written as a string or a number.
func (o obj) id(k string) (string, error) {
	if n, ok := o.m[k].(json.Number); ok {
		return n.String(), nil
	}
	return o.str(k)
}

// num reads a finite number; missing and null read 0, false.
func (o obj) num(k string) (float64, bool, error) {
	switch v := o.m[k].(type) {
	case nil:
		return 0, false, nil
	case json.Number:
		f, err := strconv.ParseFloat(v.String(), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false, fmt.Errorf("%s: %s is out of range", o.field(k), v)
		}
		return f, true, nil
	default:
		return 0, false, o.wrong(k, v, "a number")
	}
}

// count reads a whole number of at least 0.
func (o obj) count(k string) (int, error) {
	f, _, err := o.num(k)
	if err != nil {
		return 0, err
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("%s: %g is not a count", o.field(k), f)
	}
	return int(f), nil
}

// list reads an array; missing and null read nil.
func (o obj) list(k string) ([]any, error) {
	switch v := o.m[k].(type) {
	case nil:
		return nil, nil
	case []any:
		return v, nil
	default:
		return nil, o.wrong(k, v, "an array")
	}
}

// strings reads an array of strings (numbers read as their text).
func (o obj) strings(k string) ([]string, error) {
	l, err := o.list(k)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l))
	for i, e := range l {
		switch e := e.(type) {
		case string:
			out = append(out, e)
		case json.Number:
			out = append(out, e.String())
		default:
			return nil, fmt.Errorf("%s[%d]: %s where a string belongs", o.field(k), i, jsonKind(e))
		}
	}
	return out, nil
}

// object reads a nested object; ok is false when it is missing or null.
func (o obj) object(k string) (obj, bool, error) {
	v, present := o.m[k]
	if !present || v == nil {
		return obj{at: o.field(k)}, false, nil
	}
	c, err := asObj(v, o.field(k))
	return c, err == nil, err
}

// millis turns a latency in milliseconds into a duration; a value no
// timer gives (negative, more than a day) reads as unknown.
func millis(ms float64) time.Duration {
	if ms < 0 || ms > 24*3600*1000 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// jsonKind names a decoded value's JSON type.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "true or false"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value"
}
