package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// LocateJSON maps every value of a JSON document to the line where it
// starts. encoding/json keeps no positions after decoding, so a test's
// Source and the line of a bad field come from here. base is added to each
// line, for documents that start part-way into a file (a JSONL line); root
// is the path given to the document itself.
func LocateJSON(file string, data []byte, base int, root string) (*Source, error) {
	src := NewSource(file)
	idx := newLineIndex(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// path stands for depth segments; past maxLocateDepth it stays at the
	// ancestor there and nothing deeper is recorded (see source).
	var walk func(path string, depth int) error
	walk = func(path string, depth int) error {
		off := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if path != "" && depth <= maxLocateDepth {
			src.Set(path, base+idx.line(skipJSONSeparators(data, off)))
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		deeper := depth < maxLocateDepth
		switch d {
		case '{':
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				p := path
				if key, _ := k.(string); deeper {
					p = JoinPath(path, key)
				}
				if err := walk(p, depth+1); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				p := path
				if deeper {
					p = IndexPath(path, i)
				}
				if err := walk(p, depth+1); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(root, pathDepth(root)); err != nil {
		return src, err
	}
	return src, nil
}

// skipJSONSeparators moves off past the blanks, commas and colons that
// precede a value, to where the value itself starts.
func skipJSONSeparators(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// jsonSyntaxError turns a decoding error into an *Error with the line of
// the offending byte where encoding/json gives an offset.
func jsonSyntaxError(file string, data []byte, base int, err error) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	line := 0
	switch {
	case errors.As(err, &se):
		line = base + newLineIndex(data).line(max(0, int(se.Offset)-1))
	case errors.As(err, &te):
		line = base + newLineIndex(data).line(max(0, int(te.Offset)-1))
	}
	msg := err.Error()
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "unexpected end of JSON"
	}
	return &Error{File: file, Line: line, Msg: fmt.Sprintf("invalid JSON: %s", msg),
		Hint: "check brackets, quotes and commas near this line"}
}
