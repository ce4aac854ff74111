package config

import (
	"fmt"
	"sort"
	"strings"
)

// Source maps dotted field paths of one file (servers[1].slots,
// tests[3].checks[0].type) to the line where each is written. The TOML and
// JSON decoders give no positions for decoded values, so errors found after
// decoding look their line up here.
//
// The locators record paths down to maxLocateDepth segments. Every path an
// error names follows the Go types a file decodes into, which are far
// shallower; a value deeper than that takes the line of its ancestor at
// the limit. Without the limit a file nested n deep cost memory in n²
// (each level a map entry holding the whole path to it): 660 MB for 40 KB
// of nested arrays.
type Source struct {
	File  string
	lines map[string]int
}

// maxLocateDepth is how many path segments the locators record.
const maxLocateDepth = 16

func NewSource(file string) *Source {
	return &Source{File: file, lines: map[string]int{}}
}

// line returns the line of path, or of its nearest enclosing field that has
// one (a value inside an inline table has no line of its own in the map, but
// its table does); 0 when nothing encloses it.
func (s *Source) Line(path string) int {
	if s == nil {
		return 0
	}
	for path != "" {
		if l, ok := s.lines[path]; ok {
			return l
		}
		path = parentPath(path)
	}
	return 0
}

// set records the first line a path appears on; later mentions (a table
// header reopened by a dotted key) do not move it.
func (s *Source) Set(path string, line int) {
	if path == "" {
		return
	}
	if _, ok := s.lines[path]; !ok {
		s.lines[path] = line
	}
}

// parentPath drops the last segment of a dotted path: a.b[2].c -> a.b[2],
// a.b[2] -> a.b, a -> "".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// JoinPath appends a key to a path, quoting keys that would not read back
// as one segment.
func JoinPath(p, key string) string {
	if strings.ContainsAny(key, ".[] \"") || key == "" {
		key = fmt.Sprintf("%q", key)
	}
	if p == "" {
		return key
	}
	return p + "." + key
}

// pathDepth counts the segments of a path.
func pathDepth(p string) int {
	n := 0
	for ; p != ""; p = parentPath(p) {
		n++
	}
	return n
}

func IndexPath(p string, i int) string { return fmt.Sprintf("%s[%d]", p, i) }

// lineIndex converts byte offsets to 1-based line numbers.
type lineIndex []int // offsets where each line starts

func newLineIndex(data []byte) lineIndex {
	idx := lineIndex{0}
	for i, b := range data {
		if b == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (li lineIndex) line(off int) int {
	return sort.Search(len(li), func(i int) bool { return li[i] > off })
}
