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
func locateTOML(file, text string) *source {
	t := &tomlScan{s: text, line: 1, src: newSource(file), arrays: map[string]int{}}
	t.run()
	return t.src
}

type tomlScan struct {
	s      string
	i      int
	line   int
	src    *source
	arrays map[string]int // path of an array of tables -> elements seen so far
	table  string         // path of the table that keys now belong to
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
			path := t.table
			for _, k := range keys {
				path = joinPath(path, k)
				t.src.set(path, line)
			}
			t.skipSpace(false)
			if len(keys) > 0 && !t.eof() && t.s[t.i] == '=' {
				t.i++
				t.skipSpace(false)
				t.value(path)
			} else {
				t.skipLine()
			}
		}
		if t.i == start {
			t.adv()
		}
	}
}

// resolve turns header keys into a path, stepping into the latest element
// of each array of tables on the way ([servers.sim] after the second
// [[servers]] is servers[1].sim).
func (t *tomlScan) resolve(keys []string) string {
	p := ""
	for _, k := range keys {
		p = joinPath(p, k)
		if n, ok := t.arrays[p]; ok {
			p = indexPath(p, n-1)
		}
	}
	return p
}

func (t *tomlScan) tableHeader(keys []string, line int) {
	if len(keys) == 0 {
		return
	}
	t.table = t.resolve(keys)
	t.src.set(t.table, line)
}

func (t *tomlScan) arrayHeader(keys []string, line int) {
	if len(keys) == 0 {
		return
	}
	p := joinPath(t.resolve(keys[:len(keys)-1]), keys[len(keys)-1])
	n := t.arrays[p]
	t.arrays[p] = n + 1
	t.table = indexPath(p, n)
	t.src.set(p, line)
	t.src.set(t.table, line)
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
// inline-table key under path.
func (t *tomlScan) value(path string) {
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
			ep := indexPath(path, idx)
			t.src.set(ep, t.line)
			start := t.i
			t.value(ep)
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
			p := path
			for _, k := range keys {
				p = joinPath(p, k)
				t.src.set(p, line)
			}
			t.skipSpace(false)
			if !t.eof() && t.s[t.i] == '=' {
				t.i++
			}
			t.skipSpace(false)
			t.value(p)
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
