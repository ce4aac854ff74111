package jsassert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// CompileTransform prepares a promptfoo transform (a test's
// options.transform, an assertion's transform): inline code is a function
// of (output, context) whose body is the code when it has several lines,
// and `return` and the code when it has one, as promptfoo builds it (none
// of an assertion's other rules apply); a module is a CommonJS file as for
// Compile. The error names the line of a syntax error.
func CompileTransform(src string, module bool, function string) (*Program, error) {
	if module {
		return Compile(src, true, function)
	}
	body := src
	if !strings.Contains(src, "\n") {
		body = "return " + src
	}
	prog, err := goja.Compile("script", "(function (output, context, process) {"+body+"\n})", false)
	if err != nil {
		return nil, syntaxError(err)
	}
	return &Program{prog: prog}, nil
}

// Transform runs the program as a transform of in.Output and returns what
// it gave: a string as it is, anything else as the JSON text that
// JSON.stringify writes for it (promptfoo's assertions read such an output
// as that text, its javascript as the value the text holds). Returning
// null or undefined is an error, as in promptfoo.
func (p *Program) Transform(in Input) (any, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallDepth)
	stop := guard(vm)
	defer stop()

	fn, args, err := p.prepare(vm, in)
	if err != nil {
		return nil, err
	}
	v, err := fn(goja.Undefined(), args...)
	if err != nil {
		return nil, runError(err)
	}
	if pr, ok := v.Export().(*goja.Promise); ok {
		switch pr.State() {
		case goja.PromiseStateFulfilled:
			v = pr.Result()
		case goja.PromiseStateRejected:
			return nil, fmt.Errorf("the transform's promise was rejected: %s", pr.Result())
		default:
			return nil, errors.New("the transform returned a promise that never settled (there are no timers or I/O here)")
		}
	}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, errors.New("the transform returned no value")
	}
	if s, ok := v.Export().(string); ok {
		return s, nil
	}
	stringify, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	if !ok {
		return nil, errors.New("internal: no JSON.stringify")
	}
	text, err := stringify(goja.Undefined(), v)
	if err != nil {
		return nil, runError(err)
	}
	if goja.IsUndefined(text) {
		return v.String(), nil // a function, a symbol: JSON has no text for it
	}
	return json.RawMessage(text.String()), nil
}
