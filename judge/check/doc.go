// Package check holds the deterministic side of scoring: a battery test's
// checks (equals, contains, regex, is-json, json-schema, tool-call, …, and
// their not- forms), the semantic validation of a reply against what the
// request asked for (tools, tool_choice, response_format), and how a reply's
// answer is told from its inline thinking.
//
// It imports only gpu/chat and judge/check/script (promptfoo's JavaScript
// assertions, run in an embedded goja with time and memory bounds): config
// validates checks with it, the runner runs them, the judge reads answers
// with it.
package check
