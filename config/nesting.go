package config

import "fmt"

// MaxNesting caps how deep a config or battery may nest arrays, tables and
// dotted keys. A tool's JSON schema, the deepest thing a battery holds, is
// rarely ten levels deep; a file far past this is an attack or an accident,
// and the decoders behind it (recursive, one allocation per level) would
// spend memory and stack on it before any other check could run.
const MaxNesting = 256

// nestingError is the error for a file nested past maxNesting, or nil. It
// reads the text once, before any decoder does, and costs no allocation.
func nestingError(file string, data []byte, format string) *Error {
	var line int
	switch format {
	case "toml":
		line = tomlTooDeep(data, true)
	case "brackets":
		// Before the format is known: arrays, tables and objects under
		// TOML's rules for strings and comments, which JSON text and YAML's
		// flow collections also keep. Dots are left out, since YAML prose
		// is unquoted.
		line = tomlTooDeep(data, false)
	case "json", "jsonl":
		line = jsonTooDeep(data)
	case "yaml":
		// Flow collections nest by brackets, block ones by indentation.
		line = tomlTooDeep(data, false)
		if line == 0 {
			line = yamlTooDeep(data)
		}
	default:
		return nil
	}
	if line == 0 {
		return nil
	}
	return &Error{File: file, Line: line,
		Msg:  fmt.Sprintf("nested more than %d levels deep", MaxNesting),
		Hint: "no config or battery needs this depth: check that this is the file you meant"}
}

// jsonTooDeep returns the line where arrays and objects first nest past
// MaxNesting, or 0. JSONL is read the same way: each line of it is JSON.
func jsonTooDeep(data []byte) int {
	line, depth := 1, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			line++
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				switch data[i] {
				case '\\':
					i++
				case '\n':
					line++ // not JSON; the decoder will say so
				}
			}
		case '[', '{':
			if depth++; depth > MaxNesting {
				return line
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return 0
}

// yamlTooDeep returns the line where YAML's block collections first nest
// past MaxNesting, or 0. Each line's indentation is a level while deeper
// lines follow it, and so is each "- " that opens a sequence entry on it
// ("- - - x" is three sequences deep). A block scalar's lines count as
// levels too when they step in, which real prompts do a few times at most.
// yaml.v3 builds a node per level, and spaces are cheap: 64 MiB of them
// hold thousands of levels.
func yamlTooDeep(data []byte) int {
	var cols [MaxNesting]int // the open levels' columns, outermost first
	depth, line := 0, 0
	for start := 0; start < len(data); {
		end := start
		for end < len(data) && data[end] != '\n' {
			end++
		}
		l := data[start:end]
		start = end + 1
		line++
		col := 0
		for col < len(l) && l[col] == ' ' {
			col++
		}
		if col == len(l) || l[col] == '#' || l[col] == '\r' {
			continue // blank or a comment: no level
		}
		for {
			for depth > 0 && cols[depth-1] >= col {
				depth--
			}
			if depth == MaxNesting {
				return line
			}
			cols[depth] = col
			depth++
			if l[col] != '-' || col+1 >= len(l) || l[col+1] != ' ' {
				break
			}
			for col++; col < len(l) && l[col] == ' '; col++ {
			}
			if col == len(l) || l[col] == '#' || l[col] == '\r' {
				break
			}
		}
	}
	return 0
}

// tomlTooDeep returns the line where TOML first nests past maxNesting, or
// 0. Depth is arrays and inline tables open at a point, plus, when dotted
// is set, the segments of the dotted key being read there (a.b.c = 1 is
// three tables deep). Strings and comments are skipped as TOML writes
// them; the text has not been parsed yet, so the scan is only as strict as
// counting needs.
func tomlTooDeep(data []byte, dotted bool) int {
	line, depth, dots := 1, 0, 0
	n := len(data)
	for i := 0; i < n; i++ {
		c := data[i]
		switch {
		case c == '\n':
			line++
			dots = 0
		case c == '#':
			for i+1 < n && data[i+1] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			// A quoted key continues a dotted key: dots stay counted.
			i, line = skipTOMLString(data, i, line)
		case c == '.' && dotted:
			if dots++; depth+dots > MaxNesting {
				return line
			}
		case c == '[' || c == '{':
			dots = 0
			if depth++; depth > MaxNesting {
				return line
			}
		case c == ']' || c == '}':
			dots = 0
			depth = max(depth-1, 0)
		case isBare(c) || c == ' ' || c == '\t' || c == '\r':
			// Part of a key (or a number: 1.5 counts one level, harmless).
		default:
			dots = 0
		}
	}
	return 0
}

// skipTOMLString skips the string that starts at data[i] (basic "..." with
// escapes, literal '...', or their ”' and """ multi-line forms) and
// returns the index of its last byte and the line it ends on.
func skipTOMLString(data []byte, i, line int) (int, int) {
	q := data[i]
	n := len(data)
	multi := i+2 < n && data[i+1] == q && data[i+2] == q
	if multi {
		i += 3
		for ; i < n; i++ {
			switch {
			case data[i] == '\n':
				line++
			case data[i] == '\\' && q == '"':
				if i+1 < n && data[i+1] == '\n' {
					line++
				}
				i++
			case data[i] == q && i+2 < n && data[i+1] == q && data[i+2] == q:
				// Up to two more quotes may close it: they belong to the string.
				i += 2
				for k := 0; k < 2 && i+1 < n && data[i+1] == q; k++ {
					i++
				}
				return i, line
			}
		}
		return n, line
	}
	for i++; i < n && data[i] != q && data[i] != '\n'; i++ {
		if data[i] == '\\' && q == '"' {
			i++
		}
	}
	if i < n && data[i] == '\n' {
		line++ // an unclosed string: the parser will report it
	}
	return i, line
}
