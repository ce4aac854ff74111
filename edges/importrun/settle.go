package importrun

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// settle decides one cell from what the file answered, as the runner
// decides a cell from a server's reply (runner/inference.go,
// inferenceSettled): a reply gets the semantic validation every reply gets
// and the test's checks, and is ✓ only when all of them pass. checked is
// true for a reply, the cells whose checks can be compared with the other
// tool's verdict.
//
// The other tool's fail and its reason (prompt-prix's failure_reason,
// promptfoo's grading reason) are kept beside pitwall's checks as one more
// check result, named for the tool (tool is "prompt-prix", "promptfoo", …),
// so that the detail view, show and every export say why the tool failed
// the reply. It does not decide the cell: pitwall's own checks do, and a
// judge can (rejudge).
func settle(t config.Test, r Result, tool string) (c ledger.CellRow, checked bool) {
	c = ledger.CellRow{Model: r.Model, Test: r.Test, Repeat: r.Repeat, Server: ServerImported,
		Latency: r.Latency, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Attempts: 1}
	switch r.Outcome {
	case Unfinished:
		c.Status, c.ErrorClass, c.Error, c.Attempts = string(state.Cancelled), string(chat.ClassCanceled), r.Error, 0
		return c, false
	case Errored:
		c.Status, c.ErrorClass, c.Error = string(state.Errored), string(classify(r.Error)), r.Error
		c.Output = r.Output
		return c, false
	}
	text, calls := r.Output, r.ToolCalls
	if calls == nil {
		text, calls = ToolCallsInText(text)
	}
	c.Output = text
	if len(calls) > 0 {
		b, _ := json.Marshal(calls) // calls are strings only
		c.ToolCalls = string(b)
	}
	if secs := r.Latency.Seconds(); secs > 0 && r.CompletionTokens > 0 {
		c.TokensPerSec = float64(r.CompletionTokens) / secs
	}
	out := check.Output{Content: text, ToolCalls: calls, Latency: r.Latency}
	results, passed := t.Judge(out)
	if r.Verdict == VerdictFail {
		results = append(results, theirVerdict(tool, r.Why))
	}
	b, _ := json.Marshal(results) // names and reasons are strings
	c.Checks = string(b)
	c.Status = string(state.Failed)
	if passed {
		c.Status = string(state.Completed)
	}
	return c, true
}

// theirVerdict is the other tool's fail as a check result; its name says
// it is the tool's verdict, imported, and not one of the battery's checks.
func theirVerdict(tool, why string) scoring.CheckResult {
	why = strings.TrimSpace(why)
	if why == "" {
		why = tool + " gave no reason"
	}
	return scoring.CheckResult{Name: ImportedVerdictPrefix + tool + ")", Pass: false, Reason: why}
}

// ImportedVerdictPrefix opens the name of the check result that holds the
// other tool's fail: "verdict (imported from prompt-prix)".
const ImportedVerdictPrefix = "verdict (imported from "

// Error classes told from an error's words: the file keeps the message,
// not the class pitwall decides where an error is born.
var (
	httpStatus = regexp.MustCompile(`(?i)\b(?:http|status(?: code)?|error code)[ :]*([45]\d\d)\b`)
	bareStatus = regexp.MustCompile(`\b(429|502|503|504)\b`) // not 500: "max_tokens 500"
)

// classify names the class of an error the file records only as text;
// "" when its words do not say.
func classify(msg string) chat.ErrorClass {
	low := strings.ToLower(msg)
	code := ""
	if m := httpStatus.FindStringSubmatch(msg); m != nil {
		code = m[1]
	} else if m := bareStatus.FindStringSubmatch(msg); m != nil {
		code = m[1]
	}
	switch {
	case strings.Contains(low, "timeout") || strings.Contains(low, "timed out") || strings.Contains(low, "deadline exceeded"):
		return chat.ClassTimeout
	case code == "429" || strings.Contains(low, "rate limit") || strings.Contains(low, "too many requests"):
		return chat.ClassRateLimit
	case code == "503" || strings.Contains(low, "connection") || strings.Contains(low, "unavailable") ||
		strings.Contains(low, "refused"):
		return chat.ClassUnavailable
	case strings.HasPrefix(code, "5") || strings.Contains(low, "internal server error"):
		return chat.ClassHTTP5xx
	case strings.HasPrefix(code, "4"):
		return chat.ClassHTTP4xx
	case strings.Contains(low, "empty response") || strings.Contains(low, "malformed") || strings.Contains(low, "invalid json"):
		return chat.ClassMalformed
	}
	return ""
}

// verdicts compares the other tool's verdicts with pitwall's checks.
type verdicts struct {
	failPass, passFail []string // their fail that pitwall passes; their pass that pitwall fails
	fails, passes      int      // their fails and passes, of replies pitwall checked
}

func (v *verdicts) add(r *Result, c ledger.CellRow) {
	where := fmt.Sprintf("%s × %s", r.Model, r.Test)
	ours := c.Status == string(state.Completed)
	switch r.Verdict {
	case VerdictFail:
		v.fails++
		if ours {
			v.failPass = append(v.failPass, where)
		}
	case VerdictPass:
		v.passes++
		if !ours {
			v.passFail = append(v.passFail, where)
		}
	}
}

// lines says where the verdicts differ, with a few cells named.
func (v *verdicts) lines(tool string) []string {
	var out []string
	if len(v.failPass) > 0 {
		out = append(out, fmt.Sprintf("%s failed %d repl(ies); pitwall's checks pass %d of them (%s): a judge can decide them",
			tool, v.fails, len(v.failPass), examples(v.failPass)))
	}
	if len(v.passFail) > 0 {
		out = append(out, fmt.Sprintf("%s passed %d repl(ies); pitwall's checks fail %d of them (%s): pitwall checks every check the battery has",
			tool, v.passes, len(v.passFail), examples(v.passFail)))
	}
	return out
}

func examples(cells []string) string {
	if len(cells) <= 3 {
		return strings.Join(cells, "; ")
	}
	return strings.Join(cells[:3], "; ") + fmt.Sprintf("; %d more", len(cells)-3)
}
