package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// PyStr writes a JSON value as Python's str() writes what json.loads makes
// of it: prompt-prix looks a mock up by str() of each argument, so a
// battery's keys are in that spelling (True, None, 2.0, ['a', 'b'],
// {'k': 1}). Objects keep the order they were written in, as Python's
// dicts do. ok is false for text that is not JSON.
func PyStr(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	if err := pyValue(dec, &b, false); err != nil {
		return "", false
	}
	return b.String(), true
}

// pyValue writes the next value of dec; quoted asks for repr() (inside a
// list or dict) rather than str().
func pyValue(dec *json.Decoder, b *strings.Builder, quoted bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch x := tok.(type) {
	case json.Delim:
		open, close := "[", "]"
		if x == '{' {
			open, close = "{", "}"
		}
		b.WriteString(open)
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if x == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				b.WriteString(pyRepr(fmt.Sprint(k)))
				b.WriteString(": ")
			}
			if err := pyValue(dec, b, true); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteString(close)
	case string:
		if quoted {
			b.WriteString(pyRepr(x))
		} else {
			b.WriteString(x)
		}
	case json.Number:
		b.WriteString(pyNumber(string(x)))
	case bool:
		b.WriteString(map[bool]string{true: "True", false: "False"}[x])
	case nil:
		b.WriteString("None")
	}
	return nil
}

// pyNumber writes a JSON number as Python prints the int or float
// json.loads makes of it: an int as written, a float in its shortest form,
// fixed with at least one decimal between 1e-4 and 1e16, else 1.5e+16.
func pyNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(exps)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	out := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}

// pyRepr quotes a string as Python's repr() does: single quotes, double
// ones when the text holds a single quote and no double.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
