package inspect

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"pitwall/config"
)

// sample is one sample of an inspect dataset.
type sample struct {
	ID       any            `json:"id"` // string or number; optional
	Input    any            `json:"input"`
	Target   any            `json:"target"` // string or list of acceptable answers
	Choices  []string       `json:"choices"`
	Metadata map[string]any `json:"metadata"`
}

var sampleKeys = []string{"id", "input", "target", "choices", "metadata", "sandbox", "files", "setup"}

// readSample reads one sample as a test.
func readSample(r config.Record) (config.Test, bool) {
	col, n, m, at := r.Col, r.Notes, r.Fields, r.At
	b, err := json.Marshal(m)
	var s sample
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		col.Add(at, `an inspect sample is {"id", "input", "target", "choices", "metadata"}`, "cannot read the sample: %s", config.JSONDecodeError(col.Src.File, b, 0, err).Msg)
		return config.Test{}, false
	}
	t, field, msg := s.toTest(r.ID)
	if msg != "" {
		col.Add(config.Under(at, field), `input is a string or a list of {"role", "content"} messages`, "%s", msg)
		return config.Test{}, false
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(sampleKeys, k) {
			n.Add(fmt.Sprintf("inspect sample key %q is not read", k), t.ID)
		}
	}
	for _, k := range []string{"sandbox", "files", "setup"} {
		if _, ok := m[k]; ok {
			n.Add(fmt.Sprintf("inspect sample's %s is not provided: the model sees only the input", k), t.ID)
		}
	}
	return t, true
}

// toTest maps a sample onto a Test: input becomes the prompt, target the
// reference the judge compares against. A sample without an id gets
// fallbackID. msg says what is wrong with the input (at field), if anything.
func (s sample) toTest(fallbackID string) (t config.Test, field, msg string) {
	t = config.Test{ID: fallbackID}
	switch id := s.ID.(type) {
	case string:
		if id != "" {
			t.ID = id
		}
	case float64:
		t.ID = fmt.Sprintf("%g", id)
	}
	if c, ok := s.Metadata["category"].(string); ok {
		t.Category = c
	}
	if sev, ok := s.Metadata["severity"].(string); ok {
		t.Severity = strings.ToLower(strings.TrimSpace(sev))
	}
	switch in := s.Input.(type) {
	case string:
		t.User = in
	case []any:
		msgs, probs, ok := config.DecodeMessages(in)
		if !ok {
			return t, "input", "an input message is not a {\"role\", \"content\"} object"
		}
		if len(probs) > 0 {
			return t, config.Under("input", strings.TrimPrefix(probs[0].Field, "messages")), probs[0].Msg
		}
		t.Messages = msgs
		if len(t.Messages) == 1 && t.Messages[0].Role == "user" {
			t.User, t.Messages = t.Messages[0].Content, nil
		}
	default:
		return t, "input", "input is neither a string nor a list of messages"
	}
	if len(s.Choices) > 0 {
		var b strings.Builder
		b.WriteString("\n\n")
		for i, c := range s.Choices {
			fmt.Fprintf(&b, "%s) %s\n", choiceLabel(i), c)
		}
		if t.User != "" {
			t.User += strings.TrimRight(b.String(), "\n")
		} else if n := len(t.Messages); n > 0 {
			t.Messages[n-1].Content += strings.TrimRight(b.String(), "\n")
		}
	}
	switch tg := s.Target.(type) {
	case string:
		t.Reference = tg
	case []any:
		var parts []string
		for _, x := range tg {
			if str, ok := x.(string); ok {
				parts = append(parts, str)
			}
		}
		if len(parts) == 1 {
			t.Reference = parts[0]
		} else if len(parts) > 1 {
			t.Reference = "Any of these is correct:\n" + strings.Join(parts, "\n")
		}
	}
	return t, "", ""
}

// choiceLabel is A, B, … Z, then AA, AB, … as inspect letters its choices.
func choiceLabel(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}
