package gpu

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decoding a streamed chunk with encoding/json costs reflection and an
// allocation per field on every token, and showed as the largest share of
// pitwall's CPU per cell. decodeChunk reads the shape servers send token
// after token (model, choices[].index / delta.content / delta.reasoning /
// finish_reason, usage) in one pass; anything else it is not sure of (a tool
// call, a key in another case, a value of an unexpected type, an escape it
// would have to interpret) makes it give up, and the chunk goes to
// encoding/json as before. Either way the result is the same:
// FuzzDecodeChunk holds the two to it.

// decodeChunk fills ch from raw and reports true, or reports false having
// decided nothing (ch may be partly filled: the caller starts again).
func decodeChunk(raw []byte, ch *streamChunk) bool {
	p := chunkParser{b: raw}
	p.space()
	seen := false
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "model":
			return p.sameString(&ch.Model)
		case "choices":
			// A second list would be decoded into the first's elements
			// by encoding/json: not this parser's to imitate.
			if seen {
				return false
			}
			seen = true
			return p.choices(ch)
		case "usage":
			return p.usage(ch)
		}
		return p.other(key)
	})
	p.space()
	return ok && p.i == len(p.b)
}

type chunkParser struct {
	b     []byte
	i     int
	depth int // of the value being skipped: a deep one is not this parser's
}

func (p *chunkParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *chunkParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// object reads {"key": value, ...}, calling field at each value.
func (p *chunkParser) object(field func(key []byte) bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	for {
		p.space()
		key, ok := p.rawString()
		if !ok || !p.eat(':') || !ascii(key) {
			return false // a key outside ASCII may match a field by folding
		}
		p.space()
		if !field(key) {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

// array reads [value, ...], calling elem at each value.
func (p *chunkParser) array(elem func() bool) bool {
	if !p.eat('[') {
		return false
	}
	if p.eat(']') {
		return true
	}
	for {
		p.space()
		if !elem() {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat(']')
	}
}

// rawString reads a string with no escapes and returns its bytes; one with
// an escape is left to encoding/json.
func (p *chunkParser) rawString() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			s := p.b[start:j]
			return s, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// null reads the literal null.
func (p *chunkParser) null() bool {
	if strings.HasPrefix(string(p.b[p.i:min(p.i+4, len(p.b))]), "null") {
		p.i += 4
		return true
	}
	return false
}

// stringOrNull sets *dst from a string; null leaves it, as encoding/json
// does. A string with escapes (a newline in a token is one) is read by
// encoding/json alone, so that every escape means what it means there.
func (p *chunkParser) stringOrNull(dst *string) bool {
	if p.null() {
		return true
	}
	start := p.i
	if s, ok := p.rawString(); ok {
		*dst = string(s)
		return true
	}
	p.i = start
	end, ok := p.stringEnd()
	if !ok {
		return false
	}
	var s string
	if json.Unmarshal(p.b[start:end], &s) != nil {
		return false
	}
	*dst, p.i = s, end
	return true
}

// sameString is stringOrNull keeping *dst when the string is the same: a
// stream names its model in every chunk, and streamAcc keeps the name
// from one chunk to the next, so a stream reads it into a string once.
func (p *chunkParser) sameString(dst *string) bool {
	start := p.i
	if s, ok := p.rawString(); ok && string(s) == *dst {
		return true
	}
	p.i = start
	return p.stringOrNull(dst)
}

// finishReasons are the values finish_reason takes, so that a cell's is
// one of these strings and not a string of its own.
var finishReasons = [...]string{"stop", "length", "tool_calls", "content_filter", "function_call"}

// finishReason is stringOrNull for finish_reason.
func (p *chunkParser) finishReason(dst *string) bool {
	start := p.i
	if s, ok := p.rawString(); ok {
		for _, f := range finishReasons {
			if string(s) == f {
				*dst = f
				return true
			}
		}
	}
	p.i = start
	return p.stringOrNull(dst)
}

// content reads delta.content: a string without escapes (most tokens)
// into raw, the chunk's own bytes; any other into *dst as stringOrNull
// does.
func (p *chunkParser) content(raw *[]byte, dst *string) bool {
	start := p.i
	if s, ok := p.rawString(); ok {
		*raw, *dst = s, ""
		return true
	}
	p.i = start
	if p.null() {
		return true // null leaves the value as it was, as encoding/json does
	}
	*raw = nil // a key given twice: the last one is the value
	return p.stringOrNull(dst)
}

// stringEnd finds the end of the string at p.i, escapes and all.
func (p *chunkParser) stringEnd() (int, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return 0, false
	}
	for j := p.i + 1; j < len(p.b); j++ {
		switch p.b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// intOrNull sets *dst from a whole number in int range.
func (p *chunkParser) intOrNull(dst *int) bool {
	if p.null() {
		return true
	}
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	if j == digits || (p.b[digits] == '0' && j-digits > 1) {
		return false
	}
	if j < len(p.b) && (p.b[j] == '.' || p.b[j] == 'e' || p.b[j] == 'E') {
		return false
	}
	n, err := strconv.Atoi(string(p.b[p.i:j]))
	if err != nil {
		return false
	}
	*dst, p.i = n, j
	return true
}

// other skips the value of a key pitwall does not read, unless the key
// would match a field in another case (encoding/json matches keys without
// regard to case): then the chunk is not this parser's to decide.
func (p *chunkParser) other(key []byte) bool {
	var buf [24]byte // longer than any key pitwall reads: no lower-case copy needed
	if len(key) <= len(buf) {
		low := buf[:len(key)]
		for i, c := range key {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			low[i] = c
		}
		switch string(low) {
		case "model", "choices", "usage", "index", "finish_reason", "delta", "content",
			"reasoning_content", "reasoning", "tool_calls", "prompt_tokens", "completion_tokens":
			return false
		}
	}
	if !ascii(key) {
		return false // encoding/json folds some non-ASCII letters too (K, ſ): not ours to decide
	}
	return p.skip()
}

// skip passes over one value of any kind, checking it is well formed.
func (p *chunkParser) skip() bool {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 64 {
		return false
	}
	p.space()
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(func([]byte) bool { return p.skip() })
	case c == '[':
		return p.array(p.skip)
	case c == '"':
		end, ok := p.stringEnd()
		if !ok || !validString(p.b[p.i+1:end-1]) {
			return false
		}
		p.i = end
		return true
	case c == 'n':
		return p.null()
	case c == 't' || c == 'f':
		for _, lit := range []string{"true", "false"} {
			if strings.HasPrefix(string(p.b[p.i:min(p.i+len(lit), len(p.b))]), lit) {
				p.i += len(lit)
				return true
			}
		}
		return false
	case c == '-' || c >= '0' && c <= '9':
		j := p.i
		for j < len(p.b) && strings.IndexByte("+-.eE0123456789", p.b[j]) >= 0 {
			j++
		}
		if !validNumber(p.b[p.i:j]) {
			return false
		}
		p.i = j
		return true
	}
	return false
}

// validString says whether s, the inside of a JSON string, is well formed:
// no control character, and only JSON's escapes. encoding/json, which
// decides the chunks the fast path does not, accepts the same strings
// (FuzzDecodeChunk holds the two to it).
func validString(s []byte) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(s) {
				return false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+5 > len(s) {
					return false
				}
				for _, h := range s[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return true
}

// validNumber says whether s is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func (p *chunkParser) choices(ch *streamChunk) bool {
	if p.null() {
		ch.Choices = nil
		return true
	}
	ch.Choices = ch.Choices[:0]
	return p.array(func() bool {
		ch.Choices = append(ch.Choices, struct {
			Index        int    `json:"index"`
			FinishReason string `json:"finish_reason"`
			Delta        struct {
				Content          string          `json:"content"`
				ReasoningContent string          `json:"reasoning_content"`
				Reasoning        string          `json:"reasoning"`
				ToolCalls        []toolCallDelta `json:"tool_calls"`
				content          []byte
			} `json:"delta"`
		}{})
		c := &ch.Choices[len(ch.Choices)-1]
		return p.object(func(key []byte) bool {
			switch string(key) {
			case "index":
				return p.intOrNull(&c.Index)
			case "finish_reason":
				return p.finishReason(&c.FinishReason)
			case "delta":
				if p.null() {
					return true
				}
				return p.object(func(key []byte) bool {
					switch string(key) {
					case "content":
						return p.content(&c.Delta.content, &c.Delta.Content)
					case "reasoning_content":
						return p.stringOrNull(&c.Delta.ReasoningContent)
					case "reasoning":
						return p.stringOrNull(&c.Delta.Reasoning)
					case "tool_calls":
						return p.null() // a call goes to encoding/json
					}
					return p.other(key)
				})
			}
			return p.other(key)
		})
	})
}

func (p *chunkParser) usage(ch *streamChunk) bool {
	if p.null() {
		ch.Usage = nil
		return true
	}
	if ch.Usage == nil {
		ch.Usage = &struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}{}
	}
	u := ch.Usage
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return p.intOrNull(&u.PromptTokens)
		case "completion_tokens":
			return p.intOrNull(&u.CompletionTokens)
		}
		return p.other(key)
	})
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
