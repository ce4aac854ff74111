package probe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PromSample is one sample of a Prometheus metric: its labels and value.
type PromSample struct {
	Labels map[string]string
	Value  float64
}

// ParsePrometheus reads the Prometheus text exposition format, as vLLM's and
// llama.cpp's /metrics serve it, into samples by metric name. It is minimal:
// comments (# HELP, # TYPE) and blank lines are skipped, histogram and
// summary series appear under their own names (x_bucket, x_sum, x_count), and
// timestamps are dropped. A line that is not `name{labels} value [timestamp]`
// is an error naming its line number.
func ParsePrometheus(r io.Reader) (map[string][]PromSample, error) {
	out := make(map[string][]PromSample)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, s, err := parsePromLine(line)
		if err != nil {
			return nil, fmt.Errorf("prometheus line %d: %w", n, err)
		}
		out[name] = append(out[name], s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	return out, nil
}

func parsePromLine(line string) (string, PromSample, error) {
	var s PromSample
	end := 0
	for end < len(line) && isPromNameChar(line[end], end == 0) {
		end++
	}
	if end == 0 {
		return "", s, fmt.Errorf("%q: no metric name", line)
	}
	name, rest := line[:end], strings.TrimLeft(line[end:], " \t")
	if strings.HasPrefix(rest, "{") {
		labels, after, err := parsePromLabels(rest[1:])
		if err != nil {
			return "", s, fmt.Errorf("%s: %w", name, err)
		}
		s.Labels, rest = labels, after
	}
	fields := strings.Fields(rest)
	if len(fields) < 1 || len(fields) > 2 {
		return "", s, fmt.Errorf("%s: want a value and an optional timestamp, got %q", name, rest)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", s, fmt.Errorf("%s: value %q is not a number", name, fields[0])
	}
	s.Value = v
	return name, s, nil
}

func isPromNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

// parsePromLabels reads `k="v",k2="v2"}` (the opening brace already eaten)
// and returns the labels and what follows the closing brace.
func parsePromLabels(s string) (map[string]string, string, error) {
	labels := make(map[string]string)
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		end := 0
		for end < len(s) && isPromNameChar(s[end], end == 0) && s[end] != ':' {
			end++
		}
		if end == 0 {
			return nil, "", errors.New("bad label name")
		}
		key := s[:end]
		s = strings.TrimLeft(s[end:], " \t")
		if !strings.HasPrefix(s, "=") {
			return nil, "", fmt.Errorf("label %s: missing =", key)
		}
		s = strings.TrimLeft(s[1:], " \t")
		if !strings.HasPrefix(s, `"`) {
			return nil, "", fmt.Errorf("label %s: value not quoted", key)
		}
		val, after, err := unquotePromValue(s[1:])
		if err != nil {
			return nil, "", fmt.Errorf("label %s: %w", key, err)
		}
		labels[key] = val
		s = strings.TrimLeft(after, " \t")
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, "}"):
		default:
			return nil, "", fmt.Errorf("label %s: want , or } after the value", key)
		}
	}
}

// unquotePromValue reads a label value up to its closing quote, undoing the
// format's three escapes (\\, \", \n).
func unquotePromValue(s string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 == len(s) {
				return "", "", errors.New("unterminated value")
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated value")
}

// promSum adds up a metric over all its series (a vLLM with several engines
// reports one per engine), and reports whether there was any.
func promSum(m map[string][]PromSample, name string) (float64, bool) {
	ss, ok := m[name]
	if !ok {
		return 0, false
	}
	var sum float64
	for _, s := range ss {
		sum += s.Value
	}
	return sum, true
}

// promMax is the largest value of a metric over its series.
func promMax(m map[string][]PromSample, name string) (float64, bool) {
	ss, ok := m[name]
	if !ok || len(ss) == 0 {
		return 0, false
	}
	best := ss[0].Value
	for _, s := range ss[1:] {
		best = max(best, s.Value)
	}
	return best, true
}
