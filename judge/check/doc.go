// Package check holds the deterministic side of scoring: a battery test's
// checks (equals, contains, regex, is-json, json-schema, tool-call, …, and
// their not- forms), the semantic validation of a reply against what the
// request asked for (tools, tool_choice, response_format), and how a reply's
// answer is told from its inline thinking.
//
// It imports only the vocabulary (gpu/chat, judge/scoring, whose
// CheckResult it returns): config validates checks with it, the runner
// runs them, the judge reads answers with it. The javascript check's engine
// is an edge that registers itself (RegisterScriptEngine; cli links
// edges/jsassert); without one a javascript check is invalid and says so.
package check
