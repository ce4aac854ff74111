package importrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"pitwall/gpu/chat"
)

// maxPyDepth bounds the nesting of lists and dicts in a call's arguments:
// deeper text is refused rather than recursed into.
const maxPyDepth = 64

// parsePyCalls reads tool calls written as Python calls, the way LiquidAI's
// LFM models write them between <|tool_call_start|> and
// <|tool_call_end|>:
//
//	[get_weather(city="Tokyo", days=3), search(q='a "b"', tags=["x", None])]
//
// A bare call or several separated by commas are read too. Arguments are
// keyword arguments only; their values are Python literals (strings in
// either quote, numbers, True/False/None, lists, tuples, dicts), written
// back as a JSON object in the order the model wrote them.
func parsePyCalls(s string) ([]chat.ToolCall, error) {
	p := &pyParser{s: s}
	p.ws()
	bracket := p.eat('[')
	var calls []chat.ToolCall
	for {
		p.ws()
		if bracket && p.peek() == ']' && len(calls) > 0 {
			break
		}
		c, err := p.call()
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
		p.ws()
		if !p.eat(',') {
			break
		}
	}
	p.ws()
	if bracket && !p.eat(']') {
		return nil, p.errorf("a list of calls that does not close with ]")
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.errorf("text after the calls")
	}
	return calls, nil
}

type pyParser struct {
	s     string
	i     int
	depth int
}

func (p *pyParser) errorf(format string, a ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{p.i}, a...)...)
}

func (p *pyParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyParser) eat(c byte) bool {
	if p.peek() == c && p.i < len(p.s) {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *pyParser) name() string {
	start := p.i
	for p.i < len(p.s) && isNameByte(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// call reads name(key=value, ...).
func (p *pyParser) call() (chat.ToolCall, error) {
	name := p.name()
	if name == "" {
		return chat.ToolCall{}, p.errorf("a call without a function name")
	}
	p.ws()
	if !p.eat('(') {
		return chat.ToolCall{}, p.errorf("%s is not followed by (", name)
	}
	var args bytes.Buffer
	args.WriteByte('{')
	for n := 0; ; n++ {
		p.ws()
		if p.eat(')') {
			break
		}
		if n > 0 {
			if !p.eat(',') {
				return chat.ToolCall{}, p.errorf("arguments of %s not separated by commas", name)
			}
			p.ws()
			if p.eat(')') {
				break // a trailing comma
			}
		}
		key := p.name()
		p.ws()
		if key == "" || !p.eat('=') {
			return chat.ToolCall{}, p.errorf("an argument of %s that is not key=value", name)
		}
		p.ws()
		if n > 0 {
			args.WriteByte(',')
		}
		writeJSONString(&args, key)
		args.WriteByte(':')
		if err := p.value(&args); err != nil {
			return chat.ToolCall{}, err
		}
	}
	args.WriteByte('}')
	return chat.ToolCall{Name: name, Arguments: args.String()}, nil
}

// value reads one Python literal and writes it as JSON.
func (p *pyParser) value(out *bytes.Buffer) error {
	p.ws()
	switch c := p.peek(); {
	case c == '"' || c == '\'':
		s, err := p.str()
		if err != nil {
			return err
		}
		writeJSONString(out, s)
		return nil
	case c == '[':
		return p.seq(out, '[', ']')
	case c == '(':
		return p.seq(out, '(', ')')
	case c == '{':
		return p.dict(out)
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number(out)
	}
	word := p.name()
	switch word {
	case "True", "true":
		out.WriteString("true")
	case "False", "false":
		out.WriteString("false")
	case "None", "null":
		out.WriteString("null")
	default:
		if word == "" {
			return p.errorf("a value that is not a Python literal")
		}
		return p.errorf("%q is not a Python literal", word)
	}
	return nil
}

func (p *pyParser) nest() error {
	p.depth++
	if p.depth > maxPyDepth {
		return p.errorf("arguments nested deeper than %d", maxPyDepth)
	}
	return nil
}

// seq reads a list or tuple as a JSON array.
func (p *pyParser) seq(out *bytes.Buffer, open, close byte) error {
	if err := p.nest(); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	p.eat(open)
	out.WriteByte('[')
	for n := 0; ; n++ {
		p.ws()
		if p.eat(close) {
			break
		}
		if n > 0 {
			if !p.eat(',') {
				return p.errorf("list items not separated by commas")
			}
			p.ws()
			if p.eat(close) {
				break
			}
			out.WriteByte(',')
		}
		if err := p.value(out); err != nil {
			return err
		}
	}
	out.WriteByte(']')
	return nil
}

// dict reads {key: value, ...} as a JSON object; keys become strings.
func (p *pyParser) dict(out *bytes.Buffer) error {
	if err := p.nest(); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	p.eat('{')
	out.WriteByte('{')
	for n := 0; ; n++ {
		p.ws()
		if p.eat('}') {
			break
		}
		if n > 0 {
			if !p.eat(',') {
				return p.errorf("dict entries not separated by commas")
			}
			p.ws()
			if p.eat('}') {
				break
			}
			out.WriteByte(',')
		}
		var key bytes.Buffer
		if err := p.value(&key); err != nil {
			return err
		}
		k := key.String()
		var ks string
		if json.Unmarshal(key.Bytes(), &ks) != nil {
			ks = k // a number, true, null: its JSON text is the key
		}
		p.ws()
		if !p.eat(':') {
			return p.errorf("a dict entry without :")
		}
		writeJSONString(out, ks)
		out.WriteByte(':')
		if err := p.value(out); err != nil {
			return err
		}
	}
	out.WriteByte('}')
	return nil
}

// number reads an int or float; JSON gets it in its own syntax.
func (p *pyParser) number(out *bytes.Buffer) error {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("0123456789+-.eE_", p.s[p.i]) >= 0 {
		p.i++
	}
	lit := strings.ReplaceAll(p.s[start:p.i], "_", "")
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		out.WriteString(strconv.FormatInt(n, 10))
		return nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil { // also ±Inf: ParseFloat says ErrRange
		return p.errorf("%q is not a number", p.s[start:p.i])
	}
	out.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}

// str reads a quoted string with Python's common escapes.
func (p *pyParser) str() (string, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			p.i += 2
			switch e := p.s[p.i-1]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'x', 'u', 'U':
				width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.i+width > len(p.s) {
					return "", p.errorf("a cut \\%c escape", e)
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+width], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return "", p.errorf("a bad \\%c escape", e)
				}
				b.WriteRune(rune(r))
				p.i += width
			default:
				b.WriteByte(e) // \\ \' \" and the rest stand for themselves
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", errors.New("a string that does not close")
}

// writeJSONString writes s as a JSON string, leaving <, > and & as they are.
func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out.Truncate(out.Len() - 1)
}
