package check

import (
	"encoding/json"
	"pitwall/internal/textutil"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reasoning models served without a reasoning parser put their thinking
// inline. Checks, validation and the judge read the answer, not the
// thinking, so it is cut off first.

// SplitThink separates inline thinking from the answer. A <think>…</think>
// (or <thinking>) block is thinking; a closing tag with no opening one (chat
// templates that put <think> in the prompt) makes everything before it
// thinking; an opening tag that never closes (a reply cut by max_tokens)
// makes everything after it thinking. Tags are matched in any case, and a
// closing tag may have spaces before its '>'.
func SplitThink(s string) (thinking, answer string) {
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
		case textutil.HasPrefixFold(s[j:], "thinking"):
			n = len("thinking")
		case textutil.HasPrefixFold(s[j:], "think"):
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

// Answer is the part of a reply that checks and validation read.
func Answer(content string) string {
	_, a := SplitThink(content)
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

// quote is how reasons and names show found text: clipped, and with
// newlines escaped so that a reason stays on one line.
func quote(s string, n int) string {
	return strconv.Quote(textutil.Clip(s, n))
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
