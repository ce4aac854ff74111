package config

import (
	"strconv"
	"strings"
)

// locateTOML maps every table, array element and key of a TOML document to
// its line. BurntSushi/toml reports positions only for syntax errors, and
// its keys carry no array indices (servers.slots, not servers[1].slots), so
// errors about decoded values need this map to say where they are.
//
// The text has already passed the real parser; this scanner is only as
// strict as finding lines needs.
func locateTOML(file, text string) *Source {
	t := &tomlScan{s: text, line: 1, src: NewSource(file), arrays: map[string]int{}}
	t.run()
	return t.src
}

type tomlScan struct {
	s      string
	i      int
	line   int
	src    *Source
	arrays map[string]int // path of an array of tables -> elements seen so far
	table  string         // path of the table that keys now belong to
	depth  int            // segments in table, counting those past maxLocateDepth
}

// step is path extended by one segment (made by seg) at depth, the number
// of segments path stands for, recording line for it. Past
// maxLocateDepth it records nothing and returns path as it is: deeper
// values borrow their ancestor's line (see source).
func (t *tomlScan) step(path string, depth int, seg func() string, line int) string {
	if depth >= maxLocateDepth {
		return path
	}
	p := seg()
	t.src.Set(p, line)
	return p
}

func (t *tomlScan) eof() bool { return t.i >= len(t.s) }

func (t *tomlScan) adv() {
	if t.s[t.i] == '\n' {
		t.line++
	}
	t.i++
}

// skipSpace skips blanks and comments, and newlines too when nl is set.
func (t *tomlScan) skipSpace(nl bool) {
	for !t.eof() {
		switch c := t.s[t.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			t.i++
		case c == '\n' && nl:
			t.adv()
		case c == '#':
			for !t.eof() && t.s[t.i] != '\n' {
				t.i++
			}
		default:
			return
		}
	}
}

func (t *tomlScan) skipLine() {
	for !t.eof() && t.s[t.i] != '\n' {
		t.i++
	}
}

func (t *tomlScan) run() {
	for {
		t.skipSpace(true)
		if t.eof() {
			return
		}
		start := t.i
		line := t.line
		switch {
		case strings.HasPrefix(t.s[t.i:], "[["):
			t.i += 2
			t.arrayHeader(t.keyPath(), line)
			t.skipLine()
		case t.s[t.i] == '[':
			t.i++
			t.tableHeader(t.keyPath(), line)
			t.skipLine()
		default:
			keys := t.keyPath()
			path, depth := t.keys(t.table, t.depth, keys, line)
			t.skipSpace(false)
			if len(keys) > 0 && !t.eof() && t.s[t.i] == '=' {
				t.i++
				t.skipSpace(false)
				t.value(path, depth)
			} else {
				t.skipLine()
			}
		}
		if t.i == start {
			t.adv()
		}
	}
}

// keys extends path (depth segments) by a dotted key, recording line for
// each prefix, and returns the path and its depth.
func (t *tomlScan) keys(path string, depth int, keys []string, line int) (string, int) {
	for _, k := range keys {
		path = t.step(path, depth, func() string { return JoinPath(path, k) }, line)
		depth++
	}
	return path, depth
}

// resolve turns header keys into a path and its depth, stepping into the
// latest element of each array of tables on the way ([servers.sim] after
// the second [[servers]] is servers[1].sim).
func (t *tomlScan) resolve(keys []string) (string, int) {
	p, depth := "", 0
	for _, k := range keys {
		if depth >= maxLocateDepth {
			return p, len(keys)
		}
		p = JoinPath(p, k)
		if n, ok := t.arrays[p]; ok {
			p = IndexPath(p, n-1)
		}
		depth++
	}
	return p, depth
}

func (t *tomlScan) tableHeader(keys []string, line int) {
	if len(keys) == 0 {
		return
	}
	t.table, t.depth = t.resolve(keys)
	if t.depth <= maxLocateDepth {
		t.src.Set(t.table, line)
	}
}

func (t *tomlScan) arrayHeader(keys []string, line int) {
	if len(keys) == 0 {
		return
	}
	parent, depth := t.resolve(keys[:len(keys)-1])
	t.table, t.depth = parent, depth+1
	if depth >= maxLocateDepth {
		return
	}
	p := JoinPath(parent, keys[len(keys)-1])
	n := t.arrays[p]
	t.arrays[p] = n + 1
	t.table = IndexPath(p, n)
	t.src.Set(p, line)
	t.src.Set(t.table, line)
}

// keyPath reads a dotted key (bare, "basic" or 'literal' segments).
func (t *tomlScan) keyPath() []string {
	var keys []string
	for {
		t.skipSpace(false)
		if t.eof() {
			return keys
		}
		var k string
		switch c := t.s[t.i]; {
		case c == '"':
			start := t.i
			t.skipBasic()
			k = unquoteBasic(t.s[start:t.i])
		case c == '\'':
			start := t.i
			t.skipLiteral()
			k = strings.Trim(t.s[start:t.i], "'")
		case isBare(c):
			start := t.i
			for !t.eof() && isBare(t.s[t.i]) {
				t.i++
			}
			k = t.s[start:t.i]
		default:
			return keys
		}
		keys = append(keys, k)
		t.skipSpace(false)
		if t.eof() || t.s[t.i] != '.' {
			return keys
		}
		t.i++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func unquoteBasic(q string) string {
	if s, err := strconv.Unquote(q); err == nil {
		return s
	}
	return strings.Trim(q, `"`)
}

// value skips one value, recording the line of each array element and
// inline-table key under path, which stands for depth segments.
func (t *tomlScan) value(path string, depth int) {
	if t.eof() {
		return
	}
	rest := t.s[t.i:]
	switch {
	case strings.HasPrefix(rest, `"""`):
		t.skipMulti(`"""`)
	case strings.HasPrefix(rest, `'''`):
		t.skipMulti(`'''`)
	case rest[0] == '"':
		t.skipBasic()
	case rest[0] == '\'':
		t.skipLiteral()
	case rest[0] == '[':
		t.i++
		for idx := 0; ; {
			t.skipSpace(true)
			if t.eof() {
				return
			}
			switch t.s[t.i] {
			case ']':
				t.i++
				return
			case ',':
				t.i++
				continue
			}
			ep := t.step(path, depth, func() string { return IndexPath(path, idx) }, t.line)
			start := t.i
			t.value(ep, depth+1)
			if t.i == start {
				t.adv()
			}
			idx++
		}
	case rest[0] == '{':
		t.i++
		for {
			t.skipSpace(true)
			if t.eof() {
				return
			}
			switch t.s[t.i] {
			case '}':
				t.i++
				return
			case ',':
				t.i++
				continue
			}
			line := t.line
			keys := t.keyPath()
			if len(keys) == 0 {
				t.adv()
				continue
			}
			p, d := t.keys(path, depth, keys, line)
			t.skipSpace(false)
			if !t.eof() && t.s[t.i] == '=' {
				t.i++
			}
			t.skipSpace(false)
			t.value(p, d)
		}
	default:
		for !t.eof() && !strings.ContainsRune(",]}\n#", rune(t.s[t.i])) {
			t.i++
		}
	}
}

func (t *tomlScan) skipMulti(delim string) {
	t.i += len(delim)
	end := strings.Index(t.s[t.i:], delim)
	if end < 0 {
		end = len(t.s) - t.i
	}
	t.line += strings.Count(t.s[t.i:t.i+end], "\n")
	t.i += end + len(delim)
	// A closing delimiter may be followed by up to two more quotes that
	// belong to the string's content.
	for n := 0; n < 2 && !t.eof() && t.s[t.i] == delim[0]; n++ {
		t.i++
	}
	t.i = min(t.i, len(t.s))
}

func (t *tomlScan) skipBasic() {
	t.i++
	for !t.eof() && t.s[t.i] != '"' && t.s[t.i] != '\n' {
		if t.s[t.i] == '\\' {
			t.i++
		}
		t.i++
	}
	if !t.eof() && t.s[t.i] == '"' {
		t.i++
	}
	t.i = min(t.i, len(t.s))
}

func (t *tomlScan) skipLiteral() {
	t.i++
	for !t.eof() && t.s[t.i] != '\'' && t.s[t.i] != '\n' {
		t.i++
	}
	if !t.eof() && t.s[t.i] == '\'' {
		t.i++
	}
}
