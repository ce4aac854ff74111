package textutil

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Terminal makes text that came from outside (a battery's test ids, a
// server's model names and messages, a judge's reply) safe to print to a
// terminal: every character that would act on the terminal instead of
// being shown (C0 and C1 controls, DEL, ESC and so escape sequences, NUL)
// and every bidirectional control (U+202A–U+202E, U+2066–U+2069, U+200E,
// U+200F, U+061C), which can make a line read other than it is, is shown
// as an escape: \x00, \x1b, \u202e. Newlines and tabs are kept, so that a
// message of several lines stays one; invalid UTF-8 is shown byte by byte
// (\xff). Text with nothing to escape is returned as it is, without a copy.
// It is the one place this is decided: the plain output, the grid's labels
// and the command line's error messages all go through it.
func Terminal(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	sb.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&sb, `\x%02x`, s[i])
		case !unsafeRune(r, size):
			sb.WriteString(s[i : i+size])
		case r < 0x80:
			fmt.Fprintf(&sb, `\x%02x`, r)
		default:
			fmt.Fprintf(&sb, `\u%04x`, r)
		}
		i += size
	}
	return sb.String()
}

func unsafeRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// TerminalWriter writes to w what it is given through Terminal. For text
// that pitwall writes without escape sequences of its own (plain output,
// messages): it would escape those too.
func TerminalWriter(w io.Writer) io.Writer { return terminalWriter{w} }

type terminalWriter struct{ w io.Writer }

func (t terminalWriter) Write(p []byte) (int, error) {
	s := Terminal(string(p))
	if _, err := io.WriteString(t.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
