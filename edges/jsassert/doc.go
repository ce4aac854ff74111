// Package jsassert runs a battery's JavaScript assertions, with promptfoo's
// contract, in an embedded engine (goja): no node process, nothing on the
// machine is reachable from a script.
//
// A script is an expression or a function body (written inline in the
// battery) or a CommonJS module (a file:// script) exporting a function. It
// sees output (the reply: its text, or its tool calls, see Output) and
// context ({vars, prompt, test, config}), and returns a boolean, a number
// (held against a threshold) or {pass, score, reason}. The rules are in
// Compile and Result.
//
// Every call gets a fresh runtime, bounded in time (Timeout) and in memory
// (MemoryBudget, and guards on the built-ins that allocate in one step);
// a script that throws, runs away or returns something else is an error
// that says which, never a pass.
//
// It is an edge: it imports the core's judge/check only to register itself
// there as the ScriptEngine of the javascript check (register.go, in init),
// and nothing in the core imports it. cli links it (cli/edges.go); so does
// edges/promptfoo, whose batteries carry the assertions.
package jsassert
