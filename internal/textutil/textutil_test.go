package textutil

import "testing"

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
