package check

import (
	"errors"
	"sync/atomic"
)

// ScriptEngine compiles the code of a javascript check. The core links no
// engine: one registers itself from an edge (edges/jsassert runs
// promptfoo's assertions in goja), as a database/sql driver does, so that
// a program that reads no promptfoo battery (the UI among them) carries no
// JavaScript interpreter.
type ScriptEngine interface {
	// Compile prepares src: an inline assertion, or with module a CommonJS
	// file's text whose export function (or its only or default one) is
	// called. The error names the line of a syntax error.
	Compile(src string, module bool, function string) (Script, error)
}

// Script is a compiled javascript check, run once per reply.
type Script interface {
	// Run gives the script output (the reply's text, or its tool calls in
	// OpenAI's shape) and context ({vars, prompt, test, config}); a number
	// it returns passes at or above threshold (above 0 without one). A
	// script that throws, runs away or returns no verdict is an error.
	Run(output any, context map[string]any, threshold *float64) (ScriptResult, error)
}

// ScriptResult is a script's verdict.
type ScriptResult struct {
	Pass   bool
	Score  float64
	Reason string // the script's own reason, or what it returned
}

// ErrNoScriptEngine is the error of a javascript check validated or run in
// a program that registered no ScriptEngine.
var ErrNoScriptEngine = errors.New("javascript checks need a JavaScript engine, and none is linked into this program (import pitwall/edges/jsassert)")

var scriptEngine atomic.Pointer[ScriptEngine]

// RegisterScriptEngine makes e the engine of javascript checks. An edge
// calls it from init; a later call replaces the engine (a test may do so),
// and nil removes it.
func RegisterScriptEngine(e ScriptEngine) {
	compiled.Clear() // programs of the engine before are not this one's
	transforms.Clear()
	if e == nil {
		scriptEngine.Store(nil)
		return
	}
	scriptEngine.Store(&e)
}

func compileScript(key scriptKey) (Script, error) {
	e := scriptEngine.Load()
	if e == nil {
		return nil, ErrNoScriptEngine
	}
	return (*e).Compile(key.src, key.module, key.function)
}

// TransformEngine is a ScriptEngine that also runs promptfoo's transforms
// (see transform.go); edges/jsassert is one.
type TransformEngine interface {
	// CompileTransform prepares src as promptfoo builds a transform: one
	// line is an expression whose value is the new output, several lines a
	// function body that returns it; with module a CommonJS file's export.
	CompileTransform(src string, module bool, function string) (Transform, error)
}

// Transform is a compiled transform, run once per reply.
type Transform interface {
	// Run gives the transform output (as a javascript check gets it) and
	// context ({vars, prompt}) and returns the new output: a string, or
	// the JSON text (json.RawMessage) of any other value.
	Run(output any, context map[string]any) (any, error)
}

func compileTransform(key scriptKey) (Transform, error) {
	e := scriptEngine.Load()
	if e == nil {
		return nil, ErrNoScriptEngine
	}
	te, ok := (*e).(TransformEngine)
	if !ok {
		return nil, errors.New("the JavaScript engine linked into this program runs no transforms")
	}
	return te.CompileTransform(key.src, key.module, key.function)
}
