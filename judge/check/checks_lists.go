package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"pitwall/internal/textutil"
)

// The text checks that take a list or a number from Args, and those that
// read a reply's shape (see the list in checks.go).

var listKinds = map[string]checkKind{
	"contains-any":  {label: valuesLabel, validate: needValues, run: runContainsList(false, false)},
	"icontains-any": {label: valuesLabel, validate: needValues, run: runContainsList(true, false)},
	"contains-all":  {label: valuesLabel, validate: needValues, run: runContainsList(false, true)},
	"icontains-all": {label: valuesLabel, validate: needValues, run: runContainsList(true, true)},
	"contains-json": {label: noLabel, validate: optionalSchema, run: runContainsJSON},
	"levenshtein":   {label: levenshteinLabel, validate: validLevenshtein, run: runLevenshtein},
	"verdict":       {label: plainValue, validate: validVerdict, run: runVerdict},
	"response-type": {label: plainValue, validate: validResponseType, run: runResponseType},
}

// stringList reads Args[key] as a list of strings (numbers are written as
// JSON, as a battery might list 4 for "4").
func stringList(args map[string]any, key string) ([]string, error) {
	raw, ok := args[key]
	if !ok {
		return nil, fmt.Errorf(`needs args.%s, a list`, key)
	}
	v, err := plain(raw)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("args.%s must be a list, not %s", key, jsonType(v))
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		switch x := e.(type) {
		case string:
			out = append(out, x)
		case nil:
			return nil, fmt.Errorf("args.%s holds a null", key)
		default:
			b, _ := json.Marshal(x)
			out = append(out, string(b))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("args.%s is empty", key)
	}
	return out, nil
}

func needValues(c Check) error {
	_, err := stringList(c.Args, "values")
	return err
}

func valuesLabel(c Check) string {
	vs, err := stringList(c.Args, "values")
	if err != nil {
		return ""
	}
	for i, v := range vs {
		vs[i] = strconv.Quote(v)
	}
	return textutil.Clip(strings.Join(vs, ", "), 60)
}

func runContainsList(fold, all bool) func(Check, reply) (bool, string, error) {
	return func(c Check, r reply) (bool, string, error) {
		values, err := stringList(c.Args, "values")
		if err != nil {
			return false, "", err
		}
		text := r.answer
		if fold {
			text = strings.ToLower(text)
		}
		var found, missing []string
		for _, v := range values {
			needle := v
			if fold {
				needle = strings.ToLower(v)
			}
			if strings.Contains(text, needle) {
				found = append(found, strconv.Quote(v))
			} else {
				missing = append(missing, strconv.Quote(v))
			}
		}
		if all {
			if len(missing) == 0 {
				return true, "found all of them", nil
			}
			return false, "missing " + textutil.Clip(strings.Join(missing, ", "), 50) + "; reply was " + quote(strings.TrimSpace(r.answer), 50), nil
		}
		if len(found) > 0 {
			return true, "found " + textutil.Clip(strings.Join(found, ", "), 60), nil
		}
		return false, "none found; reply was " + quote(strings.TrimSpace(r.answer), 70), nil
	}
}

func optionalSchema(c Check) error {
	if c.Schema == nil {
		return nil
	}
	return validSchema(c)
}

// maxJSONStarts bounds contains-json's work on a long reply: each place
// where JSON may start is decoded once, and no more of them are tried.
const maxJSONStarts = 200

func runContainsJSON(c Check, r reply) (bool, string, error) {
	var s *schema
	if c.Schema != nil {
		var err error
		if s, err = compileSchema(c.Schema); err != nil {
			return false, "", fmt.Errorf("bad schema: %w", err)
		}
	}
	text := r.answer
	firstErr := ""
	tried := 0
	for i := 0; i < len(text) && tried < maxJSONStarts; i++ {
		if text[i] != '{' && (text[i] != '[' || r.exact) {
			continue // promptfoo looks for objects only
		}
		tried++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var v any
		if err := dec.Decode(&v); err != nil {
			continue
		}
		if s == nil {
			return true, "found a JSON " + jsonType(v), nil
		}
		errs := s.validate(v)
		if len(errs) == 0 {
			return true, "found JSON that meets the schema", nil
		}
		if firstErr == "" {
			firstErr = strings.Join(errs, "; ")
		}
		i += int(dec.InputOffset()) - 1
	}
	if firstErr != "" {
		return false, "JSON found, but " + firstErr, nil
	}
	return false, "no JSON object or array in " + quote(strings.TrimSpace(text), 60), nil
}

// levenshteinThreshold is args.threshold, 5 when absent (promptfoo's
// default).
func levenshteinThreshold(c Check) (int, error) {
	raw, ok := c.Args["threshold"]
	if !ok {
		return 5, nil
	}
	v, err := plain(raw)
	if err != nil {
		return 0, err
	}
	n, ok := v.(float64)
	if !ok || n < 0 || n != float64(int(n)) {
		return 0, errors.New("args.threshold must be a whole number of edits, 0 or more")
	}
	return int(n), nil
}

func validLevenshtein(c Check) error {
	if err := needValue(c); err != nil {
		return err
	}
	_, err := levenshteinThreshold(c)
	return err
}

func levenshteinLabel(c Check) string {
	n, _ := levenshteinThreshold(c)
	return fmt.Sprintf("%s ≤%d", quote(c.Value, 40), n)
}

func runLevenshtein(c Check, r reply) (bool, string, error) {
	limit, err := levenshteinThreshold(c)
	if err != nil {
		return false, "", err
	}
	got, want := strings.TrimSpace(r.answer), strings.TrimSpace(c.Value)
	if r.exact {
		got, want = r.answer, c.Value
	}
	d, within := boundedEditDistance(got, want, limit)
	if !within {
		return false, fmt.Sprintf("more than %d edits away: reply was %s", limit, quote(got, 60)), nil
	}
	return true, fmt.Sprintf("%d edits away", d), nil
}

// boundedEditDistance is the Levenshtein distance between a and b by
// runes, when it is at most limit; it looks only at the band of width
// 2·limit+1 around the diagonal, so a long reply costs O(len·limit).
func boundedEditDistance(a, b string, limit int) (int, bool) {
	if d := utf8.RuneCountInString(a) - utf8.RuneCountInString(b); d > limit || -d > limit {
		return 0, false
	}
	ra, rb := []rune(a), []rune(b)
	const far = 1 << 30
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j], cur[j] = far, far
		if j <= limit {
			prev[j] = j
		}
	}
	for i := 1; i <= len(ra); i++ {
		lo, hi := max(1, i-limit), min(len(rb), i+limit)
		cur[0] = far
		if i <= limit {
			cur[0] = i
		}
		if lo > 1 {
			cur[lo-1] = far
		}
		best := cur[0]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if hi < len(rb) {
			cur[hi+1] = far
		}
		if best > limit {
			return 0, false
		}
		prev, cur = cur, prev
	}
	d := prev[len(rb)]
	return d, d <= limit
}

var (
	jsonVerdict = regexp.MustCompile(`(?i)"verdict"\s*:\s*"(\w+)"`)
	lineVerdict = regexp.MustCompile(`(?im)^\W*verdict\W*\s*[:=]\s*\W*(\w+)`)
)

func validVerdict(c Check) error {
	if err := needValue(c); err != nil {
		return err
	}
	if !regexp.MustCompile(`^\w+$`).MatchString(strings.TrimSpace(c.Value)) {
		return fmt.Errorf("verdict %q must be one word, such as PASS or FAIL", c.Value)
	}
	return nil
}

// replyVerdict finds the verdict a judge-like reply gives: the first
// "verdict": "X" of a JSON answer (as prompt-prix reads one), else the
// last VERDICT: X line.
func replyVerdict(answer string) string {
	if m := jsonVerdict.FindStringSubmatch(answer); m != nil {
		return strings.ToUpper(m[1])
	}
	if ms := lineVerdict.FindAllStringSubmatch(answer, -1); ms != nil {
		return strings.ToUpper(ms[len(ms)-1][1])
	}
	return ""
}

func runVerdict(c Check, r reply) (bool, string, error) {
	want := strings.ToUpper(strings.TrimSpace(c.Value))
	got := replyVerdict(r.answer)
	switch got {
	case "":
		return false, "no verdict in " + quote(strings.TrimSpace(r.answer), 60), nil
	case want:
		return true, "verdict " + got, nil
	}
	return false, fmt.Sprintf("verdict %s, want %s", got, want), nil
}

var responseTypes = []string{"text", "tool_call", "json"}

func validResponseType(c Check) error {
	v := strings.ToLower(strings.TrimSpace(c.Value))
	for _, t := range responseTypes {
		if v == t {
			return nil
		}
	}
	return fmt.Errorf("response type %q is not one of %s", c.Value, strings.Join(responseTypes, ", "))
}

func runResponseType(c Check, r reply) (bool, string, error) {
	text := strings.TrimSpace(r.answer)
	switch strings.ToLower(strings.TrimSpace(c.Value)) {
	case "text":
		switch {
		case len(r.ToolCalls) > 0:
			return false, "called " + callsText(r.ToolCalls), nil
		case text == "":
			return false, "no text", nil
		}
		return true, "answered in text", nil
	case "tool_call":
		if len(r.ToolCalls) == 0 {
			return false, "no tool call; reply was " + quote(text, 60), nil
		}
		return true, "called " + callsText(r.ToolCalls), nil
	default: // json
		v, err := parseJSON(text)
		if err != nil {
			return false, notJSON(text, err), nil
		}
		return true, "reply is a JSON " + jsonType(v), nil
	}
}

// compactJSON writes v as JSON on one line, for labels.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}
