package judge

import (
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// parseScore normalises a judge's score to 0..1. A percentage (85%) is read
// out of 100 and a fraction (8/10, 8 out of 10) as written. A bare number
// up to 1 is already on the 0..1 scale; judges that ignore the instruction
// write 1–10 or 1–100 scales, so a bare number above 1 and up to 10 is read
// out of 10, and one above 10 and up to 100 out of 100. Whatever comes out is
// clamped to 0..1.
func parseScore(num string, percent bool, denom string) (float64, bool) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	switch {
	case percent:
		return clamp01(v / 100), true
	case denom != "":
		d, err := strconv.ParseFloat(denom, 64)
		if err != nil || d <= 0 {
			return 0, false
		}
		return clamp01(v / d), true
	}
	return bareScore(v), true
}

// bareScore reads a number written without a scale (see parseScore).
func bareScore(v float64) float64 {
	switch {
	case v > 10:
		v /= 100
	case v > 1:
		v /= 10
	}
	return clamp01(v)
}

func clamp01(v float64) float64 {
	return math.Max(0, math.Min(1, v))
}

// scoreTextRE reads a score given as a JSON string: "0.9", "85%", "8/10".
var scoreTextRE = regexp.MustCompile(`^\s*(-?(?:\d+(?:\.\d+)?|\.\d+))\s*(?:(%)|(?:/|out of)\s*(\d+(?:\.\d+)?))?\s*$`)

type jsonResult struct {
	pass     bool
	conflict bool // its verdict keys disagree, or one of them is unreadable
	score    float64
	reason   string
}

// maxJSONTries bounds a scan for JSON verdicts: each try may read the rest
// of the text, and a judge's answer with hundreds of braces is not JSON.
const maxJSONTries = 100

// jsonFound is a JSON verdict object in a text, and where it is.
type jsonFound struct {
	jsonResult
	start, end int
}

// jsonVerdicts finds the JSON objects in s that hold a verdict, directly or
// in an object one level down ({"result": {"pass": true}}), in order.
func jsonVerdicts(s string) []jsonFound {
	var found []jsonFound
	for i, tries := 0, 0; i < len(s) && tries < maxJSONTries; tries++ {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		dec := json.NewDecoder(strings.NewReader(s[start:]))
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			i = start + 1
			continue
		}
		end := start + int(dec.InputOffset())
		if v, ok := verdictOf(m); ok {
			found = append(found, jsonFound{v, start, end})
		}
		i = end
	}
	return found
}

// finalJSON finds the JSON verdict object that ends s (only spaces and the
// backticks of a closing fence may follow it), and where it starts.
func finalJSON(s string) (jsonResult, int, bool) {
	body := strings.TrimRight(s, " \t\n`")
	if !strings.HasSuffix(body, "}") {
		return jsonResult{}, 0, false
	}
	i := strings.LastIndexByte(body, '{')
	for tries := 0; i >= 0 && tries < maxJSONTries; tries++ {
		dec := json.NewDecoder(strings.NewReader(body[i:]))
		var m map[string]any
		if dec.Decode(&m) == nil && int(dec.InputOffset()) == len(body)-i {
			v, ok := verdictOf(m)
			return v, i, ok
		}
		i = strings.LastIndexByte(body[:i], '{')
	}
	return jsonResult{}, 0, false
}

func verdictOf(m map[string]any) (jsonResult, bool) {
	if v, ok := verdictFields(m); ok {
		return v, true
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if inner, ok := m[k].(map[string]any); ok {
			if v, ok := verdictFields(inner); ok {
				return v, true
			}
		}
	}
	return jsonResult{}, false
}

func verdictFields(m map[string]any) (jsonResult, bool) {
	fields := make(map[string]any, len(m))
	for k, v := range m {
		fields[strings.ToLower(k)] = v
	}
	var r jsonResult
	decided := false
	for _, k := range []string{"pass", "passed", "verdict"} {
		v, present := fields[k]
		if !present {
			continue
		}
		p, ok := passValue(v)
		switch {
		case ok && !decided:
			r.pass, decided = p, true
		case !ok || p != r.pass:
			// A second key that disagrees, or one that cannot be read
			// ("PASS/FAIL"): one verdict or none (rule 4).
			r.conflict = true
		}
	}
	if !decided {
		return r, false
	}
	r.score = defaultScore(r.pass)
	switch sc := fields["score"].(type) {
	case float64:
		r.score = bareScore(sc)
	case string:
		if m := scoreTextRE.FindStringSubmatch(sc); m != nil {
			if v, ok := parseScore(m[1], m[2] == "%", m[3]); ok {
				r.score = v
			}
		}
	}
	for _, k := range []string{"reason", "reasoning", "explanation", "rationale"} {
		if s, ok := fields[k].(string); ok && s != "" {
			r.reason = s
			break
		}
	}
	return r, true
}

// passValue reads a pass/fail value: a boolean, or a string such as "PASS",
// "failed", "true", "no".
func passValue(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "pass", "passed", "true", "yes":
			return true, true
		case "fail", "failed", "false", "no":
			return false, true
		}
	}
	return false, false
}
