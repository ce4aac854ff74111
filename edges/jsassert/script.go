package jsassert

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/dop251/goja"
)

// Program is a compiled assertion, ready to run any number of times (each
// run in a runtime of its own).
type Program struct {
	prog     *goja.Program
	module   bool
	function string
}

// Input is what one run of a script sees.
type Input struct {
	// Output becomes the script's output: a string as it is; anything else
	// (tool calls, a parsed JSON reply) as the plain JavaScript value, as
	// promptfoo passes it (JSON.parse(output) of tool calls throws there
	// too: the script fails its own assertion).
	Output any
	// Context becomes the script's context: vars, prompt, test, config.
	Context map[string]any
}

// Result is a script's verdict.
type Result struct {
	Pass   bool
	Score  float64
	Reason string // the script's own reason, or what it returned
}

// Compile prepares src, following promptfoo's rules for an inline
// assertion (module false):
//
//  1. a value of several lines is a function body, used as written: it
//     returns its verdict;
//  2. one line that starts with const, let or var is statements: return is
//     put before the expression after its last top-level semicolon;
//  3. any other line is an expression: return is put before it;
//  4. except (where promptfoo would report a syntax error) one line that
//     is already a statement: return, throw, if, for, while, try, switch.
//
// A module (a file:// script) is CommonJS: it sets module.exports (or
// exports.NAME) to a function of (output, context); "export default" is
// read as module.exports =. function names the export to call (promptfoo's
// file://path.js:NAME); without it the module's function, or its default
// export, is called.
//
// The error names the line of a syntax error.
func Compile(src string, module bool, function string) (*Program, error) {
	var wrapped string
	if module {
		wrapped = "(function (module, exports, require) {" + esmDefault.ReplaceAllString(src, "${1}module.exports =") + "\n})"
	} else {
		wrapped = "(function (output, context, process) {" + functionBody(src) + "\n})"
	}
	prog, err := goja.Compile("script", wrapped, false)
	if err != nil {
		return nil, syntaxError(err)
	}
	return &Program{prog: prog, module: module, function: function}, nil
}

var esmDefault = regexp.MustCompile(`(?m)^(\s*)export\s+default\b`)

// functionBody applies Compile's rules 1 to 3.
func functionBody(src string) string {
	src = strings.TrimRight(src, " \t\r\n")
	if strings.Contains(src, "\n") {
		return src
	}
	code := strings.TrimSpace(src)
	for strings.HasSuffix(code, ";") {
		code = strings.TrimSpace(strings.TrimSuffix(code, ";"))
	}
	if statement.MatchString(code) {
		return code
	}
	if declaration.MatchString(code) {
		if i := lastStatementEnd(code); i >= 0 {
			if expr := strings.TrimSpace(code[i+1:]); expr != "" {
				return code[:i+1] + " return " + expr
			}
		}
		return code
	}
	return "return " + code
}

var (
	declaration = regexp.MustCompile(`^(const|let|var)\s`)
	statement   = regexp.MustCompile(`^(return|throw|if|for|while|try|switch)\b`)
)

// lastStatementEnd finds the last semicolon outside brackets, strings,
// template literals and comments, or -1. A / after an operand is division,
// elsewhere it opens a regular expression literal.
func lastStatementEnd(code string) int {
	last, depth := -1, 0
	operand := false // whether the token before is a value (so / divides)
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipQuoted(code, i, c)
			operand = true
		case c == '/' && i+1 < len(code) && code[i+1] == '/':
			return last // the rest of the line is a comment
		case c == '/' && i+1 < len(code) && code[i+1] == '*':
			if end := strings.Index(code[i+2:], "*/"); end >= 0 {
				i += end + 3
			} else {
				return last
			}
		case c == '/' && !operand:
			i = skipQuoted(code, i, '/')
			operand = true
		case c == '(' || c == '[' || c == '{':
			depth++
			operand = false
		case c == ')' || c == ']' || c == '}':
			depth--
			operand = true
		case c == ';':
			if depth == 0 {
				last = i
			}
			operand = false
		case c == ' ' || c == '\t':
		case c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			operand = true
		default:
			operand = false
		}
	}
	return last
}

// skipQuoted returns the index of the quote that closes the literal opened
// at code[i], or the end of the code.
func skipQuoted(code string, i int, q byte) int {
	for j := i + 1; j < len(code); j++ {
		switch code[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return len(code)
}

// Run runs the program on in. threshold, when set, is what a numeric
// result must reach; without it a number passes when it is above 0. A
// {pass, score, reason} result decides by its pass, as in promptfoo.
func (p *Program) Run(in Input, threshold *float64) (Result, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallDepth)
	stop := guard(vm)
	defer stop()

	fn, args, err := p.prepare(vm, in)
	if err != nil {
		return Result{}, err
	}
	v, err := fn(goja.Undefined(), args...)
	if err != nil {
		return Result{}, runError(err)
	}
	return result(v, threshold)
}

// prepare sets up the runtime and returns the function to call and its
// arguments.
func (p *Program) prepare(vm *goja.Runtime, in Input) (goja.Callable, []goja.Value, error) {
	wrapOut, err := prelude(vm)
	if err != nil {
		return nil, nil, runError(err)
	}
	output, err := jsValue(vm, wrapOut, in.Output)
	if err != nil {
		return nil, nil, err
	}
	context, err := jsValue(vm, wrapOut, in.Context)
	if err != nil {
		return nil, nil, err
	}
	wrapper, err := vm.RunProgram(p.prog)
	if err != nil {
		return nil, nil, runError(err)
	}
	outer, _ := goja.AssertFunction(wrapper)
	if !p.module {
		process := vm.NewObject()
		_ = process.Set("env", vm.NewObject())
		return outer, []goja.Value{output, context, process}, nil
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	require := vm.ToValue(func(goja.FunctionCall) goja.Value {
		panic(vm.NewGoError(errors.New("require is not available to pitwall's JavaScript assertions")))
	})
	if _, err := outer(goja.Undefined(), module, exports, require); err != nil {
		return nil, nil, runError(err)
	}
	fn, err := p.exported(module.Get("exports"))
	if err != nil {
		return nil, nil, err
	}
	return fn, []goja.Value{output, context}, nil
}

// exported finds the function a module offers: the named export, the
// module itself, or its default export.
func (p *Program) exported(exports goja.Value) (goja.Callable, error) {
	if p.function != "" {
		obj, ok := exports.(*goja.Object)
		if ok {
			if fn, ok := goja.AssertFunction(obj.Get(p.function)); ok {
				return fn, nil
			}
		}
		return nil, fmt.Errorf("the script exports no function %q", p.function)
	}
	if fn, ok := goja.AssertFunction(exports); ok {
		return fn, nil
	}
	if obj, ok := exports.(*goja.Object); ok {
		if fn, ok := goja.AssertFunction(obj.Get("default")); ok {
			return fn, nil
		}
	}
	return nil, errors.New("the script exports no function (set module.exports = (output, context) => ...)")
}

// jsValue turns a Go value into a plain JavaScript one by way of JSON, so
// that arrays are arrays and objects objects, as a script expects.
func jsValue(vm *goja.Runtime, wrap goja.Callable, v any) (goja.Value, error) {
	if s, ok := v.(string); ok {
		return vm.ToValue(s), nil
	}
	if v == nil {
		return goja.Undefined(), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot give the script its input: %v", err)
	}
	out, err := wrap(goja.Undefined(), vm.ToValue(string(b)))
	if err != nil {
		return nil, runError(err)
	}
	return out, nil
}

// result reads what the script returned.
func result(v goja.Value, threshold *float64) (Result, error) {
	if p, ok := v.Export().(*goja.Promise); ok {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			v = p.Result()
		case goja.PromiseStateRejected:
			return Result{}, fmt.Errorf("the script's promise was rejected: %s", p.Result())
		default:
			return Result{}, errors.New("the script returned a promise that never settled (there are no timers or I/O here)")
		}
	}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return Result{}, errors.New("the script returned nothing (want a boolean, a number or {pass, score, reason}; a body of several lines needs its own return)")
	}
	switch x := v.Export().(type) {
	case bool:
		r := Result{Pass: x, Score: 0}
		if x {
			r.Score = 1
		} else {
			r.Reason = "the script returned false"
		}
		return r, nil
	case int64:
		return number(float64(x), threshold)
	case float64:
		return number(x, threshold)
	case map[string]any:
		return grading(x)
	}
	return Result{}, fmt.Errorf("the script returned %s (want a boolean, a number or {pass, score, reason})", describe(v))
}

func number(n float64, threshold *float64) (Result, error) {
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return Result{}, fmt.Errorf("the script returned %v, not a finite number", n)
	}
	r := Result{Score: n}
	switch {
	case threshold != nil:
		r.Pass = n >= *threshold
		if !r.Pass {
			r.Reason = fmt.Sprintf("the script returned %g, below the threshold %g", n, *threshold)
		}
	default:
		r.Pass = n > 0
		if !r.Pass {
			r.Reason = fmt.Sprintf("the script returned %g (a number passes when above 0, or at its threshold)", n)
		}
	}
	return r, nil
}

// grading reads a {pass, score, reason} object.
func grading(m map[string]any) (Result, error) {
	pass, ok := m["pass"].(bool)
	if !ok {
		return Result{}, errors.New("the script returned an object without a boolean pass (want {pass, score, reason})")
	}
	r := Result{Pass: pass}
	if pass {
		r.Score = 1
	}
	switch s := m["score"].(type) {
	case nil:
	case int64:
		r.Score = float64(s)
	case float64:
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return Result{}, fmt.Errorf("the script's score %v is not a finite number", s)
		}
		r.Score = s
	default:
		return Result{}, errors.New("the script's score is not a number")
	}
	if reason, ok := m["reason"].(string); ok {
		r.Reason = reason
	}
	return r, nil
}

// describe names a returned value in JavaScript's words.
func describe(v goja.Value) string {
	if _, ok := goja.AssertFunction(v); ok {
		return "a function"
	}
	switch x := v.Export().(type) {
	case string:
		return fmt.Sprintf("the string %q", clip(x, 40))
	case []any:
		return "an array"
	}
	if o, ok := v.(*goja.Object); ok {
		return "an object (" + o.ClassName() + ")"
	}
	return "a " + v.String()
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
