package jsassert

import (
	"strings"
	"testing"
	"time"
)

var toolCalls = []any{
	map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Tokyo"}`}},
}

func ptr(f float64) *float64 { return &f }

func TestRunReturnShapes(t *testing.T) {
	ctx := map[string]any{"vars": map[string]any{"city": "Tokyo"}, "prompt": "Weather in Tokyo?", "test": map[string]any{"description": "d"}}
	tests := []struct {
		name      string
		src       string
		module    bool
		function  string
		output    any
		threshold *float64
		pass      bool
		score     float64
		reason    string // contained in Reason
	}{
		{"expression true", "output.includes('Tokyo')", false, "", "It is sunny in Tokyo.", nil, true, 1, ""},
		{"expression false", "output.includes('Osaka')", false, "", "It is sunny in Tokyo.", nil, false, 0, "returned false"},
		{"trailing semicolons and newline", "output.length > 3;;\n", false, "", "abcd", nil, true, 1, ""},
		{"one-line statements get a return", "const n = output.length; n > 3", false, "", "abcd", nil, true, 1, ""},
		{"a semicolon in a string is not a statement end", `const s = output; s === 'a;b'`, false, "", "a;b", nil, true, 1, ""},
		{"a semicolon in a regex is not a statement end", `const ok = /x;y/.test(output); ok`, false, "", "x;y", nil, true, 1, ""},
		{"division is not a regex", `const n = output.length / 2; n === 2`, false, "", "abcd", nil, true, 1, ""},
		{"multi-line body returns itself", "const r = output;\nreturn r.some(tc => tc.function?.name === 'get_weather');", false, "", toolCalls, nil, true, 1, ""},
		{"tool calls are the raw value, not JSON text", "typeof output === 'object' && String(output) === '[object Object]'", false, "", toolCalls, nil, true, 1, ""},
		{"tool calls are an array too", "output.length === 1 && Array.isArray(output) && output[0].function.name === 'get_weather'", false, "", toolCalls, nil, true, 1, ""},
		{"optional catch binding", "try {\n  JSON.parse(output);\n  return false;\n} catch {\n  return true;\n}", false, "", "plain text", nil, true, 1, ""},
		{"context vars, prompt and test", "context.vars.city === 'Tokyo' && context.prompt.startsWith('Weather') && context.test.description === 'd'", false, "", "x", nil, true, 1, ""},
		{"number above zero passes", "0.25", false, "", "x", nil, true, 0.25, ""},
		{"zero fails", "0", false, "", "x", nil, false, 0, "returned 0"},
		{"number against a threshold", "0.6", false, "", "x", ptr(0.7), false, 0.6, "below the threshold 0.7"},
		{"number at the threshold", "0.7", false, "", "x", ptr(0.7), true, 0.7, ""},
		{"grading result", "({pass: false, score: 0.2, reason: 'too short'})", false, "", "x", nil, false, 0.2, "too short"},
		{"grading result without score", "({pass: true})", false, "", "x", nil, true, 1, ""},
		{"async function resolves", "return (async () => output === 'x')()\n", false, "", "x", nil, true, 1, ""},
		{"module function", "module.exports = (output, context) => output === context.vars.city;", true, "", "Tokyo", nil, true, 1, ""},
		{"module named export", "exports.check = (output) => ({pass: output.length > 1, score: 0.5, reason: 'len'});", true, "check", "ab", nil, true, 0.5, ""},
		{"module default export", "export default function (output) { return output === 'a' }", true, "", "a", nil, true, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.src, tt.module, tt.function)
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Run(Input{Output: tt.output, Context: ctx}, tt.threshold)
			if err != nil {
				t.Fatal(err)
			}
			if r.Pass != tt.pass || r.Score != tt.score {
				t.Fatalf("got %+v, want pass %v score %v", r, tt.pass, tt.score)
			}
			if !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", r.Reason, tt.reason)
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		module   bool
		function string
		want     string
		within   time.Duration // the run must end this soon
	}{
		{"a throw names the error and line", "const x = 1;\nreturn output.nope.deeper;", false, "", "threw TypeError: Cannot read property 'deeper' of undefined (line 2)", time.Second},
		{"a thrown string", "throw 'no good'", false, "", "threw no good", time.Second},
		{"nothing returned", "const x = 1;\nx + 1;", false, "", "returned nothing", time.Second},
		{"a string is not a verdict", "'yes'", false, "", `returned the string "yes"`, time.Second},
		{"a function is not a verdict", "() => true", false, "", "returned a function", time.Second},
		{"an object needs pass", "({score: 1})", false, "", "without a boolean pass", time.Second},
		{"NaN is no score", "NaN", false, "", "not a finite number", time.Second},
		{"a runaway loop is stopped", "while (true) {}\n", false, "", "ran longer than 1s", 10 * time.Second},
		{"runaway allocation is stopped", "const a = [];\nwhile (true) a.push('x'.repeat(4096) + a.length);", false, "", "and was stopped", 10 * time.Second},
		{"string doubling is stopped", "let s = 'x';\nwhile (true) s += s;", false, "", "and was stopped", 10 * time.Second},
		{"a huge repeat is refused", "'x'.repeat(1 << 30).length", false, "", "RangeError: repeat would exceed", time.Second},
		{"a huge fill is refused", "new Array(1e8).fill(0).length", false, "", "RangeError", time.Second},
		{"a huge sparse array cannot be walked", "const a = [];\na.length = 1e9;\nreturn a.map(x => x).length;", false, "", "RangeError", time.Second},
		{"no typed arrays", "new Uint8Array(1e9).length", false, "", "Uint8Array is not defined", time.Second},
		{"deep recursion", "function f(n) { return f(n + 1) }\nreturn f(0);", false, "", "recursed deeper than", time.Second},
		{"a promise that never settles", "return new Promise(() => {});\n", false, "", "never settled", time.Second},
		{"a rejected promise", "return Promise.reject(new Error('boom'));\n", false, "", "rejected: Error: boom", time.Second},
		{"no require", "const fs = require('fs'); module.exports = () => true;", true, "", "require is not available", time.Second},
		{"module without a function", "module.exports = 3;", true, "", "exports no function", time.Second},
		{"missing named export", "module.exports = () => true;", true, "check", `no function "check"`, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.src, tt.module, tt.function)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r, err := p.Run(Input{Output: "out"}, nil)
			took := time.Since(start)
			if err == nil {
				t.Fatalf("want an error, got %+v", r)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			if took > tt.within {
				t.Errorf("took %v, want under %v", took, tt.within)
			}
		})
	}
}

// Each bound stops a run on its own: memory with time to spare, time with
// memory to spare.
func TestEachBoundStopsARun(t *testing.T) {
	grow := "const a = [];\nwhile (true) a.push('x'.repeat(4096) + a.length);"
	tests := []struct {
		name    string
		timeout time.Duration
		memory  uint64
		want    string
	}{
		{"memory", time.Minute, 8 << 20, "allocated more than 8 MiB"},
		{"time", 50 * time.Millisecond, 1 << 40, "ran longer than 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := bounds
			t.Cleanup(func() { bounds = saved })
			bounds.timeout, bounds.memory = tt.timeout, tt.memory
			p, err := Compile(grow, false, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Run(Input{Output: "x"}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCompileNamesTheLineOfASyntaxError(t *testing.T) {
	_, err := Compile("const a = 1;\nreturn a +* 2;", false, "")
	if err == nil || !strings.Contains(err.Error(), "syntax error") || !strings.Contains(err.Error(), "Line 2") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "goja") {
		t.Errorf("message names the engine: %v", err)
	}
}

func TestEachRunIsFresh(t *testing.T) {
	p, err := Compile("globalThis.n = (globalThis.n || 0) + 1; return n === 1;\n", false, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r, err := p.Run(Input{Output: "x"}, nil)
		if err != nil || !r.Pass {
			t.Fatalf("run %d: %+v %v (state leaked between runs)", i, r, err)
		}
	}
}

func BenchmarkRun(b *testing.B) {
	p, err := Compile("const result = output;\nreturn result.some(tc => tc.function?.name === 'get_weather' && tc.function?.arguments?.includes('Tokyo'));", false, "")
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Output: toolCalls, Context: map[string]any{"vars": map[string]any{"a": "b"}}}
	b.ReportAllocs()
	for b.Loop() {
		if r, err := p.Run(in, nil); err != nil || !r.Pass {
			b.Fatal(r, err)
		}
	}
}
