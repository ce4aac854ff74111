package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"pitwall/internal/textutil"
)

// A check may carry promptfoo's transforms in Args["transform"]: a list of
// {code, module, function, file, context} tables, run in order on the
// output before the check reads it (edges/promptfoo puts a test's
// options.transform first, then the assertion's own). The first gets the
// output a javascript check gets (the text, or the tool calls in OpenAI's
// shape); each later one what the one before returned. The check then
// reads what the last returned as promptfoo's assertions read it: a
// string as it is, anything else as its JSON text (a javascript check gets
// the value itself), and no tool calls besides.
//
// A transform that throws, returns nothing or does not compile fails the
// check in both forms, as promptfoo errors the whole test: every check that
// carries it fails with the transform's error, and none is decided on the
// reply.

// transformSpec is one entry of Args["transform"].
type transformSpec struct {
	key     scriptKey
	label   string
	context map[string]any
}

// transformsOf reads Args["transform"]; nil when there is none.
func transformsOf(c Check) ([]transformSpec, error) {
	raw, ok := c.Args["transform"]
	if !ok || raw == nil {
		return nil, nil
	}
	v, err := plain(raw)
	if err != nil {
		return nil, fmt.Errorf("args.transform: %w", err)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("args.transform must be a list of {code, module, function, context}")
	}
	out := make([]transformSpec, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		code, _ := m["code"].(string)
		if !ok || strings.TrimSpace(code) == "" {
			return nil, fmt.Errorf("args.transform[%d] needs its code", i)
		}
		s := transformSpec{key: scriptKey{src: code}}
		s.key.module, _ = m["module"].(bool)
		s.key.function, _ = m["function"].(string)
		s.context, _ = m["context"].(map[string]any)
		s.label, _ = m["file"].(string)
		if s.label == "" {
			s.label = textutil.Clip(strings.Join(strings.Fields(code), " "), 60)
		}
		out = append(out, s)
	}
	return out, nil
}

// transforms caches compiled transforms, as compiled does scripts.
var transforms sync.Map // scriptKey → Transform

func transformProgram(key scriptKey) (Transform, error) {
	if p, ok := transforms.Load(key); ok {
		return p.(Transform), nil
	}
	p, err := compileTransform(key)
	if err != nil {
		return nil, err
	}
	transforms.Store(key, p)
	return p, nil
}

// transformed runs c's transforms on r and returns the reply the check
// reads instead.
func transformed(specs []transformSpec, r reply) (reply, error) {
	var out any = r.answer
	if len(r.ToolCalls) > 0 {
		out = promptfooToolOutput(r)
	}
	for _, s := range specs {
		p, err := transformProgram(s.key)
		if err == nil {
			ctx := s.context
			if ctx == nil {
				ctx = map[string]any{}
			}
			out, err = p.Run(out, ctx)
		}
		if err != nil {
			return reply{}, fmt.Errorf("transform failed (%s): %v; promptfoo errors the test, running none of its assertions", s.label, err)
		}
	}
	t := reply{Output: Output{Latency: r.Latency}, exact: true, value: out}
	switch v := out.(type) {
	case string:
		t.answer = v
	case json.RawMessage:
		t.answer = string(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return reply{}, fmt.Errorf("transform returned what JSON cannot hold: %v", err)
		}
		t.answer = string(b)
	}
	t.Content = t.answer
	return t, nil
}
