package textutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// EditDistance is the Levenshtein distance between a and b, by runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Nearest returns the candidate closest to s (case-insensitively), or ""
// when the closest is more than limit edits away: a plausible typo, not a
// different word. The first of equally near candidates wins.
func Nearest(s string, candidates []string, limit int) string {
	best, bestD := "", -1
	ls := strings.ToLower(strings.TrimSpace(s))
	for _, c := range candidates {
		d := EditDistance(ls, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// HasPrefixFold is strings.HasPrefix ignoring ASCII case.
func HasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ContainsFold reports whether s contains word in any ASCII case, without
// building a lowered copy of s. word may hold any bytes.
func ContainsFold(s, word string) bool {
	if word == "" {
		return true
	}
	first := lowerASCII(word[0])
	for i := 0; i+len(word) <= len(s); i++ {
		if lowerASCII(s[i]) == first && strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Clip shortens s to at most n runes, marking the cut with an ellipsis.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// CompactJSON returns s compacted when it is JSON, else s unchanged.
func CompactJSON(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// JSON renders a plain value as compact JSON; values that JSON cannot
// hold (which plain values never are) fall back to Go's formatting.
func JSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Names and reasons are read by people, and prompts by models: neither
	// wants <, > and & as \u escapes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ByteSize writes n bytes as people read them: 8 MiB, 1.5 MiB, 64 KiB,
// 300 bytes.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
