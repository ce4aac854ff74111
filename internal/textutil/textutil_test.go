package textutil

import (
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"contains", "contians", 2}, {"⚠️", "⚠", 1}, {"same", "same", 0},
	} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"contains", "icontains", "regex", "equals"}
	for _, c := range []struct {
		s     string
		limit int
		want  string
	}{
		{"contians", 2, "contains"},
		{"REGX", 2, "regex"},
		{"  equal ", 2, "equals"},
		{"banana", 2, ""},
		{"x", 0, ""},
	} {
		if got := Nearest(c.s, cands, c.limit); got != c.want {
			t.Errorf("Nearest(%q, %d) = %q, want %q", c.s, c.limit, got, c.want)
		}
	}
	if got := Nearest("a", nil, 5); got != "" {
		t.Errorf("Nearest with no candidates = %q", got)
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, word string
		want    bool
	}{
		{"the VERDICT: pass", "verdict", true},
		{"the VERDICT: pass", "VERDICT", true},
		{"[Tool Call] x", "[tool call]", true}, // a word that starts with a non-letter
		{"{x}", "[x]", false},                  // '[' | 0x20 is '{': not a match
		{"abc", "", true},
		{"ab", "abc", false},
	} {
		if got := ContainsFold(c.s, c.word); got != c.want {
			t.Errorf("ContainsFold(%q, %q) = %v, want %v", c.s, c.word, got, c.want)
		}
	}
}

func TestTerminalShowsControlAndBidiCharactersAsEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ünïcode ⚠️ and 漢字", "plain text, ünïcode ⚠️ and 漢字"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"\u2066isolate\u2069 \u2067rtl\u2068", `\u2066isolate\u2069 \u2067rtl\u2068`},
		{"marks \u200e\u200f\u061c", `marks \u200e\u200f\u061c`},
		{"nul\x00byte", `nul\x00byte`},
		{"\x1b[2J\x1b]0;title\x07cleared", `\x1b[2J\x1b]0;title\x07cleared`},
		{"cr\roverwrites, del\x7f, c1 \u009b", `cr\x0doverwrites, del\x7f, c1 \u009b`},
		{"bad \xff utf-8", `bad \xff utf-8`},
	}
	for _, tt := range tests {
		if got := Terminal(tt.in); got != tt.want {
			t.Errorf("Terminal(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var sb strings.Builder
	if _, err := TerminalWriter(&sb).Write([]byte("id\u202e\n")); err != nil || sb.String() != "id\\u202e\n" {
		t.Errorf("TerminalWriter wrote %q, %v", sb.String(), err)
	}
}
