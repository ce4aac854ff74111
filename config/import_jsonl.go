package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"pitwall/gpu/chat"
	"strings"
)

// loadJSONL reads one test per line. Each line is told apart by its shape:
// an object with "input" is an inspect sample, anything else a prompt-prix
// prompt. Blank lines are skipped.
func loadJSONL(path string, data []byte) ([]Test, error) {
	src := newSource(path)
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var tests []Test
	var errs Errors
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(line, &probe); err != nil {
			errs = append(errs, jsonSyntaxError(path, line, n-1, err))
			continue
		}
		var t Test
		if _, ok := probe["input"]; ok {
			var s inspectSample
			if err := json.Unmarshal(line, &s); err != nil {
				errs = append(errs, jsonSyntaxError(path, line, n-1, err))
				continue
			}
			var msg string
			if t, msg = s.toTest(fmt.Sprintf("%s-%d", stem, len(tests)+1)); msg != "" {
				errs = append(errs, &Error{File: path, Line: n, Field: "input", Msg: msg,
					Hint: `input is a string or a list of {"role", "content"} messages`})
				continue
			}
		} else {
			var p ppPrompt
			if err := json.Unmarshal(line, &p); err != nil {
				errs = append(errs, jsonSyntaxError(path, line, n-1, err))
				continue
			}
			t = p.toTest()
		}
		src.set(indexPath("tests", len(tests)), n)
		t.Source = fmt.Sprintf("%s:%d", path, n)
		tests = append(tests, t)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &Error{File: path, Msg: fmt.Sprintf("cannot read battery: %v", err)})
	}
	if len(errs) == 0 {
		errs = validateTests(tests, src)
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return tests, nil
}

// inspectSample is one sample of an inspect dataset.
type inspectSample struct {
	ID       any            `json:"id"` // string or number; optional
	Input    any            `json:"input"`
	Target   any            `json:"target"` // string or list of acceptable answers
	Choices  []string       `json:"choices"`
	Metadata map[string]any `json:"metadata"`
}

// toTest maps a sample onto a Test: input becomes the prompt, target the
// reference the judge compares against. A sample without an id gets
// fallbackID. msg says what is wrong with the input, if anything.
func (s inspectSample) toTest(fallbackID string) (Test, string) {
	t := Test{ID: fallbackID}
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
	switch in := s.Input.(type) {
	case string:
		t.User = in
	case []any:
		for _, raw := range in {
			m, ok := raw.(map[string]any)
			if !ok {
				return t, "an input message is not an object"
			}
			role, _ := m["role"].(string)
			t.Messages = append(t.Messages, chat.Message{Role: role, Content: contentText(m["content"])})
		}
		if len(t.Messages) == 1 && t.Messages[0].Role == "user" {
			t.User, t.Messages = t.Messages[0].Content, nil
		}
	default:
		return t, "input is neither a string nor a list of messages"
	}
	if len(s.Choices) > 0 {
		var b strings.Builder
		b.WriteString("\n\n")
		for i, c := range s.Choices {
			fmt.Fprintf(&b, "%c) %s\n", 'A'+i, c)
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
	return t, ""
}

// contentText flattens a message content that is a string or a list of
// parts ({"type": "text", "text": ...}); other parts (images) are dropped.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
