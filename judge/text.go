package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reasoning models served without a reasoning parser put their thinking
// inline. Checks, validation and the judge read the answer, not the
// thinking, so it is cut off first.

// splitThink separates inline thinking from the answer. A <think>…</think>
// (or <thinking>) block is thinking; a closing tag with no opening one (chat
// templates that put <think> in the prompt) makes everything before it
// thinking; an opening tag that never closes (a reply cut by max_tokens)
// makes everything after it thinking. Tags are matched in any case, and a
// closing tag may have spaces before its '>'.
func splitThink(s string) (thinking, answer string) {
	tags := thinkTags(s)
	if len(tags) == 0 {
		return "", s
	}
	var th []string
	var ans strings.Builder
	pos, in, from := 0, false, 0
	for _, t := range tags {
		switch {
		case !in && t.open:
			ans.WriteString(s[pos:t.start])
			in, from = true, t.end
		case !in: // a lone closing tag: all before it was thinking
			ans.WriteString(s[pos:t.start])
			th = append(th, ans.String())
			ans.Reset()
			pos = t.end
		case !t.open:
			th = append(th, s[from:t.start])
			in, pos = false, t.end
		}
		// An opening tag inside thinking is part of the thinking.
	}
	if in {
		th = append(th, s[from:])
	} else {
		ans.WriteString(s[pos:])
	}
	for i := range th {
		th[i] = strings.TrimSpace(th[i])
	}
	return strings.Join(nonEmpty(th), "\n\n"), ans.String()
}

type thinkTag struct {
	open       bool
	start, end int
}

// thinkTags finds <think>, <thinking>, </think> and </thinking> in s, in any
// case. It is a plain scan: it runs on every reply and every judge answer.
func thinkTags(s string) []thinkTag {
	var tags []thinkTag
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		j := i + 1
		open := true
		if j < len(s) && s[j] == '/' {
			open, j = false, j+1
		}
		n := 0
		switch {
		case hasPrefixFold(s[j:], "thinking"):
			n = len("thinking")
		case hasPrefixFold(s[j:], "think"):
			n = len("think")
		default:
			continue
		}
		j += n
		if !open {
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
		}
		if j < len(s) && s[j] == '>' {
			tags = append(tags, thinkTag{open: open, start: i, end: j + 1})
			i = j
		}
	}
	return tags
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// containsFold reports whether s contains the lower-case ASCII word, in any
// case, without building a lowered copy of s.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if c := s[i] | 0x20; c == word[0] && strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// answerText is the part of a reply that checks and validation read.
func answerText(content string) string {
	_, a := splitThink(content)
	return a
}

func nonEmpty(ss []string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// clip shortens s to at most n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
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

// quote is how reasons and names show found text: clipped, and with
// newlines escaped so that a reason stays on one line.
func quote(s string, n int) string {
	return strconv.Quote(clip(s, n))
}

// jsonBody returns the JSON text of a reply: the reply itself, or the body of
// a ``` or ```json fence that wraps the whole reply (models add one even when
// asked for bare JSON).
func jsonBody(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := s[3 : len(s)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return strings.TrimSpace(body)
	}
	lang := strings.TrimSpace(body[:nl])
	if lang != "" && !strings.EqualFold(lang, "json") {
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}

// parseJSON decodes a reply as JSON (fence allowed) into plain Go values.
func parseJSON(content string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(jsonBody(content)), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// plain turns values decoded from TOML or JSON (int64, []map[string]any, …)
// into the shapes encoding/json produces (float64, []any, map[string]any), so
// that comparisons and schema rules need to know only one set of types.
func plain(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// compactJSON returns s compacted when it is JSON, else s unchanged.
func compactJSON(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// mustMarshal renders a plain value as compact JSON; values that JSON cannot
// hold (which plain values never are) fall back to Go's formatting.
func mustMarshal(v any) string {
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

// snippet shows the text around s[start:end], pad runes either side.
func snippet(s string, start, end, pad int) string {
	from := start
	for i := 0; i < pad && from > 0; i++ {
		_, w := utf8.DecodeLastRuneInString(s[:from])
		from -= w
	}
	to := end
	for i := 0; i < pad && to < len(s); i++ {
		_, w := utf8.DecodeRuneInString(s[to:])
		to += w
	}
	out := s[from:to]
	if from > 0 {
		out = "…" + out
	}
	if to < len(s) {
		out += "…"
	}
	return strconv.Quote(out)
}
