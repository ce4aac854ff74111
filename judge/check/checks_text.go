package check

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// The checks that read the answer's text.

func runEquals(c Check, r reply) (bool, string, error) {
	got, want := strings.TrimSpace(r.answer), strings.TrimSpace(c.Value)
	if r.exact {
		got, want = r.answer, c.Value
	}
	if got == want {
		return true, "reply was exactly " + quote(got, 60), nil
	}
	return false, "reply was " + quote(got, 60), nil
}

func runContains(c Check, r reply) (bool, string, error) {
	if i := strings.Index(r.answer, c.Value); i >= 0 {
		return true, "found in " + snippet(r.answer, i, i+len(c.Value), 20), nil
	}
	return false, "reply was " + quote(strings.TrimSpace(r.answer), 80), nil
}

func runIContains(c Check, r reply) (bool, string, error) {
	lower := strings.ToLower(r.answer)
	needle := strings.ToLower(c.Value)
	i := strings.Index(lower, needle)
	if i < 0 {
		return false, "reply was " + quote(strings.TrimSpace(r.answer), 80), nil
	}
	// Lowering can change byte lengths (İ), and then offsets in lower
	// do not point into the answer: show its start instead.
	if len(lower) != len(r.answer) {
		return true, "found in " + quote(strings.TrimSpace(r.answer), 60), nil
	}
	return true, "found in " + snippet(r.answer, i, i+len(needle), 20), nil
}

func runRegex(c Check, r reply) (bool, string, error) {
	re, err := regexp.Compile(c.Value)
	if err != nil {
		return false, "", fmt.Errorf("bad regex %q: %w", c.Value, err)
	}
	if loc := re.FindStringIndex(r.answer); loc != nil {
		return true, "matched " + snippet(r.answer, loc[0], loc[1], 10), nil
	}
	return false, "reply was " + quote(strings.TrimSpace(r.answer), 80), nil
}

func runStartsWith(c Check, r reply) (bool, string, error) {
	got := strings.TrimLeftFunc(r.answer, unicode.IsSpace)
	if r.exact {
		got = r.answer
	}
	found := "reply starts " + quote(got, len([]rune(c.Value))+20)
	return strings.HasPrefix(got, c.Value), found, nil
}

func runIsJSON(_ Check, r reply) (bool, string, error) {
	v, err := r.json()
	if err != nil {
		return false, notJSON(r.answer, err), nil
	}
	return true, "reply is a JSON " + jsonType(v), nil
}

func runJSONSchema(c Check, r reply) (bool, string, error) {
	s, err := compileSchema(c.Schema)
	if err != nil {
		return false, "", fmt.Errorf("bad schema: %w", err)
	}
	v, err := r.json()
	if err != nil {
		return false, notJSON(r.answer, err), nil
	}
	if errs := s.validate(v); len(errs) > 0 {
		return false, strings.Join(errs, "; "), nil
	}
	return true, "reply meets the schema", nil
}

func notJSON(answer string, err error) string {
	return fmt.Sprintf("not JSON (%v): %s", err, quote(strings.TrimSpace(answer), 60))
}

func runNotRefusal(_ Check, r reply) (bool, string, error) {
	head := quote(strings.TrimSpace(r.answer), 60)
	if r.exact && (len(r.ToolCalls) > 0 || strings.TrimSpace(r.answer) == "") {
		// promptfoo's is-refusal takes a reply with no text of its own (empty,
		// or tool calls) for a refusal.
		return false, "reply has no text (promptfoo counts it a refusal)", nil
	}
	if isRefusal(r.answer) {
		return false, "reply is a refusal: " + head, nil
	}
	return true, "reply is not a refusal: " + head, nil
}

func runMaxLatency(c Check, r reply) (bool, string, error) {
	limit, err := latencyLimit(c)
	if err != nil {
		return false, "", err
	}
	return r.Latency <= limit, "took " + r.Latency.Round(latencyRounding(r.Latency)).String(), nil
}

// latencyRounding keeps about three significant figures: 12.3s, 2.31s, 412ms.
func latencyRounding(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return 100 * time.Millisecond
	case d >= time.Second:
		return 10 * time.Millisecond
	case d >= time.Millisecond:
		return time.Millisecond
	}
	return 1
}
