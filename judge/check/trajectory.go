package check

import (
	"fmt"
	"strings"

	"pitwall/judge/scoring"
)

// How checks read an agent test's trajectory (Output.Steps set). Each check
// has a scope:
//
//	(none)     the whole loop as one reply: its final answer as the text,
//	           every call of every step, in order, as the calls. So tool-call
//	           matches a call made at any step, tool-call-count counts the
//	           loop's calls, first-tool-call reads the loop's first call.
//	final      the last model turn alone: its text and its calls (none when
//	           the loop ended with an answer).
//	any-step   each model turn on its own; the check passes when it passes
//	           on some turn. Its not- form passes when it passes on none:
//	           not-contains "rm -rf" [any-step] holds when no turn wrote it.
//
// A test of one request is one turn: every scope reads the reply.
type scope string

const (
	scopeTrajectory scope = ""
	scopeFinal      scope = "final"
	scopeAnyStep    scope = "any-step"
)

// Scopes lists the scopes a check may name.
func Scopes() []string { return []string{string(scopeFinal), string(scopeAnyStep)} }

func scopeOf(c Check) (scope, error) {
	switch s := strings.ToLower(strings.TrimSpace(c.Scope)); s {
	case "", "trajectory", "all-steps":
		return scopeTrajectory, nil
	case "final", "last", "final-step":
		return scopeFinal, nil
	case "any-step", "any_step", "anystep", "each-step":
		return scopeAnyStep, nil
	}
	return scopeTrajectory, fmt.Errorf("unknown scope %q (write scope = \"final\" or \"any-step\", or leave it out for the whole trajectory)", c.Scope)
}

// runScoped runs a check's kind on the part of the reply its scope reads;
// negation is the caller's, after the scope has decided.
func runScoped(k checkKind, c Check, sc scope, r reply) (bool, string, error) {
	if len(r.Steps) == 0 {
		return k.run(c, r)
	}
	switch sc {
	case scopeFinal:
		return k.run(c, stepReply(r.Steps[len(r.Steps)-1]))
	case scopeAnyStep:
		var seen []string
		for i, s := range r.Steps {
			pass, found, err := k.run(c, stepReply(s))
			if err != nil {
				return false, "", err
			}
			if pass {
				return true, fmt.Sprintf("step %d: %s", i+1, found), nil
			}
			if len(seen) < 3 {
				seen = append(seen, fmt.Sprintf("step %d: %s", i+1, found))
			}
		}
		found := strings.Join(seen, "; ")
		if more := len(r.Steps) - len(seen); more > 0 {
			found += fmt.Sprintf(" (and %d more steps)", more)
		}
		return false, found, nil
	}
	return k.run(c, r)
}

func stepReply(o Output) reply { return reply{Output: o, answer: Answer(o.Content)} }

// ValidateTrajectory is Validate for an agent test's loop (out.Steps set):
// the final answer, when the loop ended with one, is validated as a reply
// (not empty, not a refusal, the response format); and tool_choice holds
// for the first step (the only one it is sent with: a loop under
// "required" could never end). A call to a tool not offered, or with
// arguments that are not JSON, is not a failure here: as in prompt-prix's
// react loop, the model was shown an error observation and could recover,
// and the loop's own check (the runner's agent-loop) counts such calls.
// Without steps it is Validate.
func ValidateTrajectory(e Expect, out Output) []scoring.CheckResult {
	if len(out.Steps) == 0 {
		return Validate(e, out)
	}
	var res []scoring.CheckResult
	if last := out.Steps[len(out.Steps)-1]; len(last.ToolCalls) == 0 {
		res = Validate(Expect{ResponseFormat: e.ResponseFormat}, Output{Content: last.Content})
	}
	if e.HasTools {
		if r, ok := toolChoiceResult(e.ToolChoice, out.Steps[0].ToolCalls); ok {
			if !r.Pass {
				r.Reason = "first step: " + r.Reason
			}
			res = append(res, r)
		}
	}
	return res
}
