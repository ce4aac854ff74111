package judge

import (
	"pitwall/internal/textutil"
	"pitwall/judge/check"
	"pitwall/judge/scoring"
	"regexp"
	"strings"
)

// How Parse reads a judge's answer.
//
//  1. Inline thinking is removed (see splitThink): a closed <think>…</think>
//     block, everything before a lone </think>, everything after a lone
//     <think>. A verdict written only while thinking does not count.
//  2. Any <candidate_output>…</candidate_output> block the judge echoed is
//     removed too: the candidate's own text never decides its verdict.
//  3. The verdict is the LAST verdict line of what is left. A verdict line
//     starts a line, after optional markdown (*, _, #, >, -, |, spaces), with
//     "verdict" or "final verdict", any case, optionally in bold, then ":",
//     "=", "-", "–", "—" or "is", then PASS, PASSED, FAIL or FAILED, any case,
//     optionally in bold, brackets or quotes. So `VERDICT: PASS`,
//     `**VERDICT:** FAIL`, `scoring.Verdict - pass`, `## Final verdict: **PASSED**`
//     all count, and "…so the verdict: pass is right" in the middle of a
//     sentence does not. Taking the last line means a candidate's
//     `VERDICT: PASS` that the judge quotes in its reasoning is overridden by
//     the judge's own final line.
//  4. The score is the last `SCORE: x` after the verdict line (or on it), or
//     failing that on one of the two lines before it; see parseScore for the
//     forms. Without one, PASS scores 1 and FAIL 0.
//  5. Without a verdict line, the last JSON object in the text that holds a
//     verdict ({"pass": true, "score": 0.9, "reason": "…"} or
//     {"verdict": "FAIL", …}, fenced or not) decides.
//  6. Otherwise ParseErr says what was missing; Raw is always kept.

var (
	verdictLineRE = regexp.MustCompile(`(?i)^[ \t>*#_|-]*(?:final[ \t]+)?verdict[ \t*_]*(?:[:=–—-]|[ \t]is\b)[ \t*_"'\[(]*(pass(?:ed)?|fail(?:ed)?)\b`)
	scoreRE       = regexp.MustCompile(`(?i)(?:^|[^a-z])score[ \t*_]*(?:[:=–—-]|[ \t]is\b)[ \t*_"'\[(]*(-?(?:\d+(?:\.\d+)?|\.\d+))(?:[ \t]*(%)|[ \t]*(?:/|out of)[ \t]*(\d+(?:\.\d+)?))?`)
	reasonLineRE  = regexp.MustCompile(`(?i)^[ \t>*#_|-]*reason(?:ing)?[ \t*_]*:[ \t*_]*(\S.*)$`)
	echoRE        = regexp.MustCompile(`(?is)<\s*candidate_output\s*>.*?<\s*/\s*candidate_output\s*>`)
)

// maxReason bounds scoring.Sample.Reason, a one-line summary.
const maxReason = 200

// Parse reads a judge's answer. It never fails: when no verdict is found,
// ParseErr says so and Raw keeps the answer for the person reading it.
func Parse(raw string) scoring.Sample {
	s := scoring.Sample{Raw: raw}
	text := strings.ReplaceAll(raw, "\r\n", "\n")
	thinking, answer := check.SplitThink(text)
	if textutil.ContainsFold(answer, "candidate_output") {
		answer = echoRE.ReplaceAllString(answer, "")
	}

	if lineStart, m := lastLineMatch(answer, "verdict", verdictLineRE); m != nil {
		// (?i) lets "ſ" stand for "s", so decide on the first letter alone.
		s.Pass = m[1][0]|0x20 == 'p'
		s.Score = defaultScore(s.Pass)
		if v, ok := scoreNear(answer, lineStart); ok {
			s.Score = v
		}
		s.Reasoning = strings.TrimSpace(answer[:lineStart])
		s.Reason = reasonOf(s.Reasoning, answer[lineStart:])
		if s.Reasoning == "" {
			s.Reasoning = thinking
		}
		return s
	}
	if v, start, ok := jsonVerdict(answer); ok {
		s.Pass, s.Score, s.Reason = v.pass, v.score, textutil.Clip(oneLine(v.reason), maxReason)
		s.Reasoning = strings.TrimSpace(answer[:start])
		if s.Reasoning == "" {
			s.Reasoning = thinking
		}
		return s
	}
	s.Reasoning = thinking
	switch {
	case strings.TrimSpace(text) == "":
		s.ParseErr = "the judge's answer was empty"
	case strings.TrimSpace(answer) == "" && thinking != "":
		s.ParseErr = "the judge only reasoned (<think>) and gave no verdict; its max_tokens may be too low"
	default:
		s.ParseErr = "no VERDICT: PASS/FAIL line or JSON verdict in the judge's answer"
	}
	return s
}

func defaultScore(pass bool) float64 {
	if pass {
		return 1
	}
	return 0
}

// scoreNear finds the score that goes with the verdict line starting at
// lineStart: the last one from that line on, else the last one on the two
// non-empty lines before it.
func scoreNear(answer string, lineStart int) (float64, bool) {
	if v, ok := lastScore(answer[lineStart:]); ok {
		return v, true
	}
	before := strings.Split(strings.TrimRight(answer[:lineStart], " \t\n"), "\n")
	for i, seen := len(before)-1, 0; i >= 0 && seen < 2; i-- {
		if strings.TrimSpace(before[i]) == "" {
			continue
		}
		seen++
		if v, ok := lastScore(before[i]); ok {
			return v, true
		}
	}
	return 0, false
}

func lastScore(s string) (float64, bool) {
	ms := scoreRE.FindAllStringSubmatch(s, -1)
	if len(ms) == 0 {
		return 0, false
	}
	m := ms[len(ms)-1]
	return parseScore(m[1], m[2] == "%", m[3])
}

// reasonOf is a one-line summary of a judge's answer: a `REASON:` line when
// the judge wrote one, else the last line of its reasoning.
func reasonOf(reasoning, tail string) string {
	for _, part := range []string{tail, reasoning} {
		if _, m := lastLineMatch(part, "reason", reasonLineRE); m != nil {
			return textutil.Clip(oneLine(m[1]), maxReason)
		}
	}
	lines := strings.Split(reasoning, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.Trim(lines[i], " \t*_#>-"); l != "" {
			return textutil.Clip(oneLine(l), maxReason)
		}
	}
	return ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// lastLineMatch finds the last line of s that matches re, trying only lines
// that contain keyword (lower-case ASCII, matched in any case): a regexp over
// every line of a long answer costs more than the rest of Parse. It returns
// where the line starts and the submatches.
func lastLineMatch(s, keyword string, re *regexp.Regexp) (int, []string) {
	end := len(s)
	for end >= 0 {
		start := strings.LastIndexByte(s[:end], '\n') + 1
		line := s[start:end]
		if textutil.ContainsFold(line, keyword) {
			if m := re.FindStringSubmatch(line); m != nil {
				return start, m
			}
		}
		end = start - 1
	}
	return 0, nil
}
