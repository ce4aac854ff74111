package check

import (
	"cmp"
	"errors"
	"fmt"
	"pitwall/internal/textutil"
	"pitwall/judge/scoring"
	"regexp"
	"strings"
	"time"
)

// How checks read a reply. All of them read the answer with inline
// <think>…</think> thinking removed.
//
//	equals        the answer, trimmed of surrounding whitespace, is exactly Value (trimmed)
//	contains      the answer contains Value (case-sensitive)
//	icontains     the answer contains Value, ignoring case
//	regex         Value (Go RE2 syntax; write (?i) or (?s) in it for flags) matches somewhere in the answer
//	starts-with   the answer, leading whitespace removed, begins with Value
//	is-json       the answer is JSON (a ``` or ```json fence around all of it is allowed)
//	json-schema   the answer is JSON that meets Schema (the subset described in schema.go)
//	tool-call     some tool call is named Name and its arguments contain Args (see argsMatch)
//	no-tool-call  the reply made no tool call
//	not-refusal   the answer does not open with a refusal (see refusal.go)
//	max-latency   the reply took at most Value, a Go duration such as "2s" or "1500ms"
//
// Checks for text, with lists in Args (checks_lists.go):
//
//	contains-any, icontains-any   the answer contains one of Args["values"] (icontains-: ignoring case)
//	contains-all, icontains-all   the answer contains every one of Args["values"]
//	contains-json  some JSON object or array is in the answer; with Schema, one that meets it
//	levenshtein    the answer, trimmed, is within Args["threshold"] edits (default 5) of Value
//	verdict        the answer's verdict ("verdict": "X" in JSON, or a VERDICT: X line) is Value
//	response-type  Value is text (an answer and no tool call), tool_call (a call) or json (the answer is JSON)
//
// Checks for tool calls (checks_args.go); Name picks the calls to a tool
// (all calls when empty), and a check passes when one such call meets it:
//
//	tool-call-any       some call names one of Args["names"]
//	first-tool-call     the first call is named Name and its arguments contain Args (as tool-call)
//	tool-call-count     the number of calls (to Name) is Value: "2", ">=1", "<=3"
//	tool-args-enum      each argument named in Args has one of the values listed for it
//	tool-args-required  the arguments listed in Args["params"] are present and not null
//	tool-args-types     each argument named in Args has the JSON type given for it (string, number,
//	                    integer, boolean, array, object, null), or, for an object, the nested types
//	tool-args-pattern   each argument named in Args is a string that the pattern given for it matches
//	tool-args-contains  each argument named in Args is a string containing the text given, ignoring case
//	valid-tool-calls    there is a call, and every call names one of Args["tools"] (a map from name to
//	                    its parameters schema) with arguments that meet that schema
//
// javascript runs Value, a promptfoo JavaScript assertion, with Args
// (threshold, vars, prompt, test, config, module, function, test_id,
// source, output): see checks_script.go.
//
// On an agent test's trajectory, a check reads the whole loop unless its
// scope says "final" (the last model turn) or "any-step" (each turn on its
// own): see trajectory.go.
//
// "not-" before any of them inverts it: not-contains, not-regex,
// not-tool-call (no call to Name with Args), not-no-tool-call (some tool call
// was made), not-not-refusal (the reply is a refusal, for tests that want one).
// A check that is itself invalid fails in either form.

type checkKind struct {
	// label is what follows the type in scoring.CheckResult.Name.
	label func(c Check) string
	// validate reports what is wrong with the check's own fields.
	validate func(c Check) error
	// run decides the check and says what it found, in both outcomes, so
	// that the found text explains a failure of the check or of its "not-".
	run func(c Check, r reply) (pass bool, found string, err error)
}

// reply is an Output with the answer text worked out once for all checks.
type reply struct {
	Output
	answer string
	// exact is set for a check with args.output "promptfoo": answer is then
	// the text promptfoo's assertions read (see promptfooReply), compared as
	// it is, without trimming or unwrapping a fence.
	exact bool
	// value is what a transform returned (see transform.go), which a
	// javascript check gets as its output; nil without a transform.
	value any
}

var baseCheckTypes = []string{
	"equals", "contains", "icontains", "regex", "starts-with", "is-json",
	"json-schema", "tool-call", "no-tool-call", "not-refusal", "max-latency",
	"contains-any", "icontains-any", "contains-all", "icontains-all", "contains-json",
	"levenshtein", "verdict", "response-type",
	"tool-call-any", "first-tool-call", "tool-call-count", "tool-args-enum", "tool-args-required",
	"tool-args-types", "tool-args-pattern", "tool-args-contains", "valid-tool-calls",
	"javascript",
}

var checkKinds map[string]checkKind

func init() {
	checkKinds = map[string]checkKind{
		"equals":       {label: quotedValue, validate: needValue, run: runEquals},
		"contains":     {label: quotedValue, validate: needValue, run: runContains},
		"icontains":    {label: quotedValue, validate: needValue, run: runIContains},
		"regex":        {label: slashedValue, validate: validRegex, run: runRegex},
		"starts-with":  {label: quotedValue, validate: needValue, run: runStartsWith},
		"is-json":      {label: noLabel, validate: noFields, run: runIsJSON},
		"json-schema":  {label: noLabel, validate: validSchema, run: runJSONSchema},
		"tool-call":    {label: toolCallLabel, validate: validToolCall, run: runToolCall},
		"no-tool-call": {label: noLabel, validate: noFields, run: runNoToolCall},
		"not-refusal":  {label: noLabel, validate: noFields, run: runNotRefusal},
		"max-latency":  {label: plainValue, validate: validLatency, run: runMaxLatency},
	}
	for name, k := range listKinds {
		checkKinds[name] = k
	}
	for name, k := range argKinds {
		checkKinds[name] = k
	}
	checkKinds["javascript"] = scriptKind
}

// ValidCheckTypes lists every check type a battery may use: the base types,
// then their "not-" forms.
func ValidCheckTypes() []string {
	out := append([]string(nil), baseCheckTypes...)
	for _, t := range baseCheckTypes {
		out = append(out, "not-"+t)
	}
	return out
}

// lookupCheck resolves a check type to its kind and whether it is negated.
// A base type wins over a "not-" reading, so not-refusal is the base check
// and not-not-refusal its inverse.
func lookupCheck(typ string) (checkKind, bool, bool) {
	t := strings.ToLower(strings.TrimSpace(typ))
	if k, ok := checkKinds[t]; ok {
		return k, false, true
	}
	if rest, ok := strings.CutPrefix(t, "not-"); ok {
		if k, ok := checkKinds[rest]; ok {
			return k, true, true
		}
	}
	return checkKind{}, false, false
}

// ValidateCheck reports what is wrong with a check as written in a battery:
// an unknown type, a missing value or tool name, a bad regex, schema or
// duration. Config calls it at load time and adds the file and line.
func ValidateCheck(c Check) error {
	if strings.TrimSpace(c.Type) == "" {
		return fmt.Errorf("check has no type (want one of %s, or not- before one)", strings.Join(baseCheckTypes, ", "))
	}
	k, _, ok := lookupCheck(c.Type)
	if !ok {
		msg := fmt.Sprintf("unknown check type %q", c.Type)
		if near := nearestCheckType(c.Type); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return fmt.Errorf("%s; valid types: %s, or not- before one", msg, strings.Join(baseCheckTypes, ", "))
	}
	if err := k.validate(c); err != nil {
		return fmt.Errorf("check %s: %w", strings.TrimSpace(c.Type), err)
	}
	if _, err := scopeOf(c); err != nil {
		return fmt.Errorf("check %s: %w", strings.TrimSpace(c.Type), err)
	}
	// A transform's code is compiled when it runs: one that does not
	// compile errors its test there, as in promptfoo, not the battery.
	if _, err := transformsOf(c); err != nil {
		return fmt.Errorf("check %s: %w", strings.TrimSpace(c.Type), err)
	}
	return nil
}

// RunChecks evaluates a test's deterministic checks against a reply, one
// result per check, in order.
func RunChecks(checks []Check, out Output) []scoring.CheckResult {
	if len(checks) == 0 {
		return nil
	}
	r := reply{Output: out, answer: Answer(out.Content)}
	results := make([]scoring.CheckResult, 0, len(checks))
	for _, c := range checks {
		results = append(results, runCheck(c, r))
	}
	return results
}

func runCheck(c Check, r reply) scoring.CheckResult {
	k, negate, ok := lookupCheck(c.Type)
	if !ok {
		return scoring.CheckResult{Name: c.Type, Reason: fmt.Sprintf("invalid check: unknown type %q", c.Type)}
	}
	name := strings.ToLower(strings.TrimSpace(c.Type))
	if l := k.label(c); l != "" {
		name += " " + l
	}
	sc, serr := scopeOf(c)
	if sc != scopeTrajectory {
		name += " [" + string(sc) + "]"
	}
	if err := cmp.Or(k.validate(c), serr); err != nil {
		return scoring.CheckResult{Name: name, Reason: "invalid check: " + err.Error()}
	}
	if specs, err := transformsOf(c); err != nil || len(specs) > 0 {
		if err == nil {
			r, err = transformed(specs, r)
		}
		if err != nil {
			return scoring.CheckResult{Name: name, Reason: err.Error()}
		}
	}
	if mode, _ := c.Args["output"].(string); mode == "promptfoo" && !isScript(c) {
		r = promptfooReply(r)
	}
	pass, found, err := runScoped(k, c, sc, r)
	if err != nil {
		return scoring.CheckResult{Name: name, Reason: "invalid check: " + err.Error()}
	}
	if negate {
		pass = !pass
	}
	res := scoring.CheckResult{Name: name, Pass: pass}
	if !pass {
		res.Reason = found
	}
	return res
}

// Labels: how a check's value shows in its name.

func quotedValue(c Check) string  { return quote(c.Value, 40) }
func slashedValue(c Check) string { return "/" + textutil.Clip(c.Value, 40) + "/" }
func plainValue(c Check) string   { return textutil.Clip(strings.TrimSpace(c.Value), 20) }
func noLabel(Check) string        { return "" }

func toolCallLabel(c Check) string {
	if len(c.Args) == 0 {
		return c.Name
	}
	args, err := plain(c.Args)
	if err != nil {
		return c.Name + "(…)"
	}
	return c.Name + "(" + textutil.Clip(textutil.JSON(args), 60) + ")"
}

// Validation of a check's fields.

func noFields(Check) error { return nil }

func needValue(c Check) error {
	if mode, _ := c.Args["output"].(string); mode == "promptfoo" {
		return nil // promptfoo compares with "" as with any text
	}
	if c.Value == "" {
		return errors.New(`needs a value (value = "...")`)
	}
	return nil
}

func validRegex(c Check) error {
	if err := needValue(c); err != nil {
		return err
	}
	if _, err := regexp.Compile(c.Value); err != nil {
		return fmt.Errorf("bad regex %q: %w", c.Value, err)
	}
	return nil
}

func validSchema(c Check) error {
	if c.Schema == nil {
		return errors.New("needs a schema (schema = {type = \"object\", ...})")
	}
	if _, err := compileSchema(c.Schema); err != nil {
		return fmt.Errorf("bad schema: %w", err)
	}
	return nil
}

func validToolCall(c Check) error {
	if strings.TrimSpace(c.Name) == "" {
		return errors.New(`needs the function's name (name = "get_weather")`)
	}
	if _, err := plain(c.Args); err != nil {
		return fmt.Errorf("args: %w", err)
	}
	return nil
}

func validLatency(c Check) error {
	_, err := latencyLimit(c)
	return err
}

func latencyLimit(c Check) (time.Duration, error) {
	v := strings.TrimSpace(c.Value)
	if v == "" {
		return 0, errors.New(`needs a duration (value = "2s")`)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (write it like \"2s\" or \"1500ms\")", v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", v)
	}
	return d, nil
}

// nearestCheckType suggests a type within two edits of a misspelt one.
func nearestCheckType(typ string) string {
	return textutil.Nearest(typ, ValidCheckTypes(), 2)
}
