package check

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"pitwall/internal/textutil"
)

// The javascript check runs Value, a promptfoo JavaScript assertion (an
// expression, a function body, or with args.module a CommonJS file's text),
// in the registered ScriptEngine (script_engine.go). Args carries what promptfoo gives the script and how to
// read its answer:
//
//	threshold  a number result passes at or above it (without one, above 0)
//	vars, prompt, test, config   the script's context.vars, .prompt, .test, .config
//	module, function             a file script, and the export to call
//	file, test_id, source        where it came from, for labels and errors
//	output     "json": a reply that is JSON is given parsed (promptfoo does so
//	           for a json_schema response_format)
//
// The script's output is the reply's answer (thinking removed), or, when
// the reply made tool calls, the calls in OpenAI's shape
// ([{id, type, function: {name, arguments}}]), or, with text besides, the
// message {role, content, tool_calls}, as promptfoo's OpenAI provider gives
// them. A script that throws, runs away or returns something that is no
// verdict makes the check invalid: it fails in both forms, and its reason
// names the test.
var scriptKind = checkKind{label: scriptLabel, validate: validScript, run: runScript}

type scriptKey struct {
	src      string
	module   bool
	function string
}

// compiled caches programs by source: a battery's scripts are few and run
// once per cell.
var compiled sync.Map // scriptKey → Script

func scriptArgs(c Check) (key scriptKey, threshold *float64, err error) {
	a, err := plain(c.Args)
	if err != nil {
		return key, nil, fmt.Errorf("args: %w", err)
	}
	args, _ := a.(map[string]any)
	key = scriptKey{src: c.Value}
	if v, ok := args["module"]; ok {
		if key.module, ok = v.(bool); !ok {
			return key, nil, errors.New("args.module must be true or false")
		}
	}
	if v, ok := args["function"]; ok {
		if key.function, ok = v.(string); !ok {
			return key, nil, errors.New("args.function must be a name")
		}
	}
	if v, ok := args["threshold"]; ok && v != nil {
		f, ok := v.(float64)
		if !ok {
			return key, nil, errors.New("args.threshold must be a number")
		}
		threshold = &f
	}
	if strings.TrimSpace(c.Value) == "" {
		return key, nil, errors.New("needs the script as its value")
	}
	return key, threshold, nil
}

func validScript(c Check) error {
	key, _, err := scriptArgs(c)
	if err != nil {
		return err
	}
	_, err = compileScript(key)
	return err
}

func program(key scriptKey) (Script, error) {
	if p, ok := compiled.Load(key); ok {
		return p.(Script), nil
	}
	p, err := compileScript(key)
	if err != nil {
		return nil, err
	}
	compiled.Store(key, p)
	return p, nil
}

func scriptLabel(c Check) string {
	if f, ok := c.Args["file"].(string); ok && f != "" {
		return f
	}
	line, _, _ := strings.Cut(strings.TrimSpace(c.Value), "\n")
	return textutil.Clip(line, 40)
}

func runScript(c Check, r reply) (bool, string, error) {
	key, threshold, err := scriptArgs(c)
	if err != nil {
		return false, "", err
	}
	p, err := program(key)
	if err != nil {
		return false, "", scriptError(c, err)
	}
	ctx := map[string]any{}
	for _, k := range []string{"vars", "prompt", "test", "config"} {
		if v, ok := c.Args[k]; ok {
			ctx[k] = v
		}
	}
	if _, ok := ctx["vars"]; !ok {
		ctx["vars"] = map[string]any{}
	}
	res, err := p.Run(scriptOutput(c, r), ctx, threshold)
	if err != nil {
		return false, "", scriptError(c, err)
	}
	found := res.Reason
	if found == "" {
		found = fmt.Sprintf("the script passed (score %g)", res.Score)
		if !res.Pass {
			found = fmt.Sprintf("the script failed (score %g)", res.Score)
		}
	}
	return res.Pass, found, nil
}

// scriptError names the test the script belongs to.
func scriptError(c Check, err error) error {
	where := ""
	if id, ok := c.Args["test_id"].(string); ok && id != "" {
		where = fmt.Sprintf("test %q", id)
	}
	if src, ok := c.Args["source"].(string); ok && src != "" {
		where = strings.TrimSpace(where + " (" + src + ")")
	}
	if where == "" {
		return err
	}
	return fmt.Errorf("%s: javascript assertion: %w", where, err)
}

// scriptOutput is what promptfoo's OpenAI provider would pass as output.
func scriptOutput(c Check, r reply) any {
	if r.value != nil {
		return r.value
	}
	text := r.answer
	if len(r.ToolCalls) > 0 {
		calls := make([]any, 0, len(r.ToolCalls))
		for i, tc := range r.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", i+1)
			}
			calls = append(calls, map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		if strings.TrimSpace(text) == "" {
			return calls
		}
		return map[string]any{"role": "assistant", "content": text, "tool_calls": calls}
	}
	if mode, _ := c.Args["output"].(string); mode == "json" {
		if v, err := parseJSON(text); err == nil && v != nil {
			return v
		}
	}
	return text
}
