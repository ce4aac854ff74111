package judge

import (
	"fmt"
	"pitwall/internal/textutil"
	"pitwall/judge/scoring"
	"regexp"
	"strings"
)

// How ParseReply reads a judge's answer. Only what the judge itself wrote
// decides; the candidate's text, which RenderCandidate neutralised and the
// judge may quote, never does.
//
//  0. Only an answer that ended by itself, with finish_reason "stop", is
//     read. One the server cut short ("length": max_tokens reached, even
//     when a "stop" chunk followed), stopped ("content_filter"), ended
//     with no finish_reason at all (a stream that sent [DONE] without
//     one), or ended in any other way is a judge error whatever it says:
//     the verdict line it ends on may be one it was quoting. (A stream the
//     connection dropped never reaches ParseReply: the client's error
//     says it was cut, and the judgment is a judge error with it.)
//  1. Inline thinking is removed (see splitThink): a closed <think>…</think>
//     (or <thinking>) block, and everything before a lone </think>. An
//     opening tag that never closes makes the rest thinking only where it
//     begins the answer (a reasoning judge cut short); elsewhere it is text
//     the judge quoted, and it hides nothing that follows.
//  2. What the judge echoed of the candidate is removed (see ownText):
//     every line that begins with candidateMark or "[tool call]" (the
//     candidate's marked lines and its tool calls, as RenderCandidate
//     writes them; removed first, before thinking is split, so that a tag
//     the judge decoded from them opens or closes nothing),
//     <candidate_output>…</candidate_output> blocks, and everything before
//     a closing tag that has no opening one.
//  2a. Given the candidate's reply (ParseReplyFor), a line of the answer
//     that is, spaces trimmed, verbatim a line of the reply that
//     RenderCandidate would mark (a verdict, a score, a tag, …) is the
//     candidate's, quoted without its mark: it is dropped with the marked
//     lines, and takes no part in rules 3 to 6.
//  3. The verdict is the LAST one the judge wrote of: a verdict line; a
//     verdict label alone on its line ("VERDICT:") with PASS or FAIL alone on
//     the next non-empty line; a JSON object holding a verdict that ends the
//     answer ({"pass": true, "score": 0.9, "reason": "…"} or
//     {"verdict": "FAIL", …}, fenced or not). A verdict line starts a line,
//     after optional markdown (*, _, #, >, -, |, spaces), with "verdict" or
//     "final verdict", any case, optionally in bold, then ":", "=", "-",
//     "–", "—" or "is", then PASS, PASSED, FAIL or FAILED, any case,
//     optionally in bold, brackets or quotes. So `VERDICT: PASS`,
//     `**VERDICT:** FAIL`, `Verdict - pass`, `## Final verdict: **PASSED**`,
//     `VERDICT: [PASS]` all count.
//  4. One verdict grammar: the last line that tries to give a verdict (a
//     verdict label followed by anything that holds "pass" or "fail", or a
//     label alone on its line) must be one of rule 3's, holding exactly one
//     verdict token. After the token only its closing marks, `.` or `!`,
//     a score (`, SCORE: 0.8`) and plain words may follow; anything that
//     could be a second verdict makes the answer a judge error that names
//     it: "or", "/", "|", "?", a bracket, a second PASS, FAIL or
//     VERDICT, even inside a word (`VERDICT: PASS or VERDICT: FAIL`, `VERDICT: PASS/FAIL`,
//     `VERDICT: [PASS or FAIL]`, `VERDICT: PASS? No - FAIL.`). An earlier
//     verdict line never stands in for a malformed last one. The same
//     holds for a JSON verdict whose keys disagree ({"pass": true,
//     "verdict": "FAIL"}).
//  5. Any other verdict the judge's own text states (what is left after
//     rules 1 and 2: thinking is free to change its mind) that disagrees
//     with its last one makes the answer ambiguous: a judge error that
//     says so. Before the last verdict that is a verdict line, a JSON
//     verdict, or a bare PASS or FAIL alone on its line (a judge that
//     wrote FAIL and then quoted the candidate's PASS last). After it
//     that is also one in a sentence ("…the final answer is VERDICT:
//     FAIL") or on a line that begins with an upper-case PASS or FAIL
//     (`PASS? No - FAIL.`). With no verdict of rule 3 at all, one in a
//     sentence is an error too. The judge's verdict is what it wrote on a
//     line of its own, last, and never contradicted.
//  6. The score is the last `SCORE: x` on the verdict line or after it (see
//     parseScore for the forms), or the JSON verdict's own score. A score
//     before the verdict is not read: it cannot be told from one the judge
//     quoted. Without one, PASS scores 1 and FAIL 0.
//  7. Otherwise ParseErr says what was missing; Raw is always kept.

var (
	verdictLineRE = regexp.MustCompile(`(?i)^[ \t>*#_|-]*(?:final[ \t]+)?verdict[ \t*_]*(?:[:=–—-]|[ \t]is\b)[ \t*_"'\[(]*(pass(?:ed)?|fail(?:ed)?)\b`)
	// verdictLabelRE and verdictValueRE are the two lines of a verdict
	// split over two: "VERDICT:" then "FAIL".
	verdictLabelRE = regexp.MustCompile(`(?i)^[ \t>*#_|-]*(?:final[ \t]+)?verdict[ \t*_]*[:=–—-]?[ \t*_]*$`)
	verdictValueRE = regexp.MustCompile(`(?i)^[ \t>*#_|-]*[*_"'\[(]*(pass(?:ed)?|fail(?:ed)?)\b[ \t*_"'\]).!]*$`)
	// verdictTryRE is a line that tries to give a verdict: a verdict label
	// and its separator, whatever follows (rule 4).
	verdictTryRE = regexp.MustCompile(`(?i)^[ \t>*#_|-]*(?:final[ \t]+)?verdict[ \t*_]*(?:[:=–—-]|[ \t]is\b)`)
	// closingRE is what may close a verdict token: bold, brackets, quotes
	// around it, and the end of a sentence.
	closingRE = regexp.MustCompile(`^[ \t*_"'\]).!]*`)
	// secondRE is what could be a second verdict after the token (matched
	// against fold of the rest, with its score clause taken out): a verdict
	// word anywhere, even inside another ("FAIL0", "bypassed"), since a
	// word boundary is easy to hide.
	secondRE = regexp.MustCompile(`\bor\b|[/|?\[\](){}<>]|pass|fail|verdict`)
	// tokenLineRE is a line that begins with an upper-case verdict token.
	tokenLineRE = regexp.MustCompile(`^[ \t>*#_|-]*[*_"'\[(]*(PASS(?:ED)?|FAIL(?:ED)?)\b`)
	// mentionRE is a verdict anywhere, in a sentence or a JSON field.
	mentionRE    = regexp.MustCompile("(?i)verdict[ \\t*_\"'`]*(?:[:=–—-]|[ \\t]is\\b)[ \\t*_\"'`\\[(]*(pass(?:ed)?|fail(?:ed)?)\\b")
	scoreRE      = regexp.MustCompile(`(?i)(?:^|[^a-z])score[ \t*_]*(?:[:=–—-]|[ \t]is\b)[ \t*_"'\[(]*(-?(?:\d+(?:\.\d+)?|\.\d+))(?:[ \t]*(%)|[ \t]*(?:/|out of)[ \t]*(\d+(?:\.\d+)?))?`)
	reasonLineRE = regexp.MustCompile(`(?i)^[ \t>*#_|-]*reason(?:ing)?[ \t*_]*:[ \t*_]*(\S.*)$`)
)

// maxReason bounds scoring.Sample.Reason, a one-line summary.
const maxReason = 200

// ParseReply reads a judge's answer as the server returned it: its text,
// the finish_reason it gave, and the max_tokens the request asked for (for
// the message when the answer was cut). It is the one way a judge's
// answer becomes a verdict. It never fails: a sample without a verdict has
// ParseErr set, and Raw keeps the answer.
func ParseReply(content, finishReason string, maxTokens int) scoring.Sample {
	return ParseReplyFor("", content, finishReason, maxTokens)
}

// ParseReplyFor is ParseReply for an answer on candidate, the reply the
// judge graded as the server gave it (Input.Reply): the candidate's lines
// the judge quoted verbatim are not the judge's (rule 2a). With candidate
// "" it is ParseReply.
func ParseReplyFor(candidate, content, finishReason string, maxTokens int) scoring.Sample {
	s := parse(content, candidate)
	if msg := notEnded(finishReason, maxTokens); msg != "" {
		return scoring.Sample{Raw: content, Reasoning: s.Reasoning, ParseErr: msg}
	}
	return s
}

// notEnded says why an answer that did not end by itself (finish_reason
// "stop") is not read.
func notEnded(finishReason string, maxTokens int) string {
	switch finishReason {
	case "stop":
		return ""
	case "length":
		if maxTokens > 0 {
			return fmt.Sprintf("the judge's answer was cut at max_tokens %d: raise max_tokens for this judge ([[scoring.judges]] max_tokens)", maxTokens)
		}
		return "the judge's answer was cut by the server's token limit: set max_tokens for this judge ([[scoring.judges]] max_tokens)"
	case "content_filter":
		return "the server's content filter stopped the judge's answer (finish_reason content_filter)"
	case "":
		return "the judge's answer ended without a finish_reason (the stream ended, [DONE] or not, with no finish marker), so it may have been cut: only an answer that ends with finish_reason stop is read"
	}
	return fmt.Sprintf("the judge's answer ended with finish_reason %q, not stop: only an answer that ends by itself is read", textutil.Clip(finishReason, 40))
}

// Parse reads a judge's answer text alone, as ParseReply does for an answer
// that ended by itself.
func Parse(raw string) scoring.Sample { return parse(raw, "") }

// parse reads a judge's answer on candidate ("" when not known).
func parse(raw, candidate string) scoring.Sample {
	s := scoring.Sample{Raw: raw}
	text := strings.ReplaceAll(raw, "\r\n", "\n")
	// The candidate's lines go first, marked or quoted verbatim: a tag in
	// one (decoded by a judge that decodes entities) must not open or
	// close thinking.
	own, quoted := dropQuoted(dropMarked(text), candidate)
	thinking, answer := splitThink(own)
	answer, cut := ownText(answer)

	v, problem := findVerdict(answer, cut)
	if problem == "" {
		s.Pass, s.Score, s.Reason = v.pass, v.score, v.reason
		s.Reasoning = strings.TrimSpace(answer[:v.start])
		if s.Reasoning == "" {
			s.Reasoning = thinking
		}
		return s
	}
	s.Reasoning = thinking
	switch {
	case strings.TrimSpace(text) == "":
		s.ParseErr = "the judge's answer was empty"
	case problem != noVerdict:
		s.ParseErr = problem
	case strings.TrimSpace(answer) == "" && thinking != "":
		s.ParseErr = "the judge only reasoned (<think>) and gave no verdict; its max_tokens may be too low"
	case quoted > 0:
		s.ParseErr = fmt.Sprintf("%s of its own: %d of its lines are verbatim lines of the candidate's reply that look like a judge's (a verdict, a score), and are read as the candidate's", noVerdict, quoted)
	default:
		s.ParseErr = noVerdict
	}
	return s
}

const noVerdict = "no VERDICT: PASS/FAIL line or JSON verdict in the judge's answer"

// verdict is the verdict found in a judge's own text, and where it starts.
type verdict struct {
	pass   bool
	score  float64
	reason string
	start  int // where the verdict (its line, or its JSON object) starts
	end    int // where it ends
}

// findVerdict applies rules 3 to 5 to the judge's own text. cut is what
// of it went before a closing tag that ownText cut at: it is no verdict,
// but a verdict in it that disagrees still makes the answer ambiguous.
// problem is noVerdict, or why what is there is not taken, when there is
// no verdict.
func findVerdict(answer, cut string) (verdict, string) {
	line, hasLine, bad := lastVerdictLine(answer)
	j, jStart, hasJSON := finalJSON(answer)
	switch {
	case hasJSON && (!hasLine || jStart > line.start):
		// Nothing follows a JSON verdict that ends the answer.
		if j.conflict {
			return verdict{}, fmt.Sprintf("the judge's JSON verdict %s gives both PASS and FAIL: the answer is ambiguous",
				oneLine(textutil.Clip(answer[jStart:], 80)))
		}
		if earlier := disagreeingBefore(cut+"\n"+answer[:jStart], j.pass); earlier != "" {
			return verdict{}, contradicted(j.pass, earlier)
		}
		return verdict{pass: j.pass, score: j.score, reason: textutil.Clip(oneLine(j.reason), maxReason),
			start: jStart, end: len(answer)}, ""
	case bad != "":
		return verdict{}, bad
	case hasLine:
		if later := disagreeing(answer[line.end:], line.pass); later != "" {
			return verdict{}, fmt.Sprintf("the judge's verdict line says %s, but it wrote %q after it: the answer is ambiguous",
				passWord(line.pass), later)
		}
		if earlier := disagreeingBefore(cut+"\n"+answer[:line.start], line.pass); earlier != "" {
			return verdict{}, contradicted(line.pass, earlier)
		}
		line.score = defaultScore(line.pass)
		if v, ok := lastScore(answer[line.start:]); ok {
			line.score = v
		}
		line.reason = reasonOf(strings.TrimSpace(answer[:line.start]), answer[line.start:])
		return line, ""
	}
	// A regexp in any case has no prefix to skip to: look for the word first.
	if textutil.ContainsFold(answer, "verdict") {
		if m := mentionRE.FindString(answer); m != "" {
			return verdict{}, fmt.Sprintf("the judge's verdict (%q) is inside a sentence, not on a line of its own such as `VERDICT: FAIL`", m)
		}
	}
	if js := jsonVerdicts(answer); len(js) > 0 {
		return verdict{}, "the judge's JSON verdict does not end its answer, so it may be one it quoted"
	}
	return verdict{}, noVerdict
}

// lastVerdictLine finds the last line of answer that tries to give a
// verdict (rule 4) and reads it: a verdict line, or a verdict split over a
// label line and a value line. bad says why the last try is not a verdict
// of the grammar; then no earlier line is read in its place.
func lastVerdictLine(answer string) (v verdict, ok bool, bad string) {
	end := len(answer)
	for end >= 0 {
		start := strings.LastIndexByte(answer[:end], '\n') + 1
		l := answer[start:end]
		if textutil.ContainsFold(l, "verdict") {
			if verdictLabelRE.MatchString(l) {
				pass, vEnd, value, ok := valueLine(answer, end)
				if !ok {
					return verdict{}, false, fmt.Sprintf("the judge's verdict label %q is not followed by PASS or FAIL alone on the next line (%q)",
						clipLine(l), clipLine(value))
				}
				return verdict{pass: pass, start: start, end: vEnd}, true, ""
			}
			if loc := verdictTryRE.FindStringIndex(l); loc != nil && mayHoldVerdict(l[loc[1]:]) {
				m := verdictLineRE.FindStringSubmatchIndex(l)
				if m == nil {
					return verdict{}, false, fmt.Sprintf("the judge's verdict line %q does not give PASS or FAIL right after the label: write `VERDICT: PASS` or `VERDICT: FAIL`", clipLine(l))
				}
				if what := secondVerdict(l[m[3]:]); what != "" {
					return verdict{}, false, malformed(l, what)
				}
				return verdict{pass: isPass(l[m[2]:m[3]]), start: start, end: end}, true, ""
			}
		}
		end = start - 1
	}
	return verdict{}, false, ""
}

// mayHoldVerdict reports whether what follows a verdict label holds
// something like a verdict word, so that the line is a try at a verdict
// and not prose such as "Verdict: see below".
func mayHoldVerdict(rest string) bool {
	f := fold(rest)
	return strings.Contains(f, "pass") || strings.Contains(f, "fail")
}

// secondVerdict returns what, in rest (what follows a verdict token on
// its line), could be a second verdict, or "". The token's closing marks
// and a score clause are not.
func secondVerdict(rest string) string {
	rest = rest[len(closingRE.FindString(rest)):]
	if strings.TrimSpace(rest) == "" {
		return ""
	}
	rest = scoreRE.ReplaceAllString(rest, " ")
	if m := secondRE.FindString(fold(rest)); m != "" {
		return m
	}
	return ""
}

func malformed(line, what string) string {
	return fmt.Sprintf("the judge's verdict line %q holds more than one verdict token (%q): one verdict, `VERDICT: PASS` or `VERDICT: FAIL`, is read, and nothing after it that could be a second",
		clipLine(line), what)
}

func clipLine(l string) string { return textutil.Clip(strings.TrimSpace(l), 80) }

// valueLine reads the first non-empty line after from as a bare PASS or
// FAIL, and returns where it ends and the line itself.
func valueLine(answer string, from int) (pass bool, end int, line string, ok bool) {
	for from < len(answer) {
		start := from + 1
		end = strings.IndexByte(answer[start:], '\n')
		if end < 0 {
			end = len(answer)
		} else {
			end += start
		}
		l := answer[start:end]
		if strings.TrimSpace(l) != "" {
			m := verdictValueRE.FindStringSubmatch(l)
			if m == nil {
				return false, 0, l, false
			}
			return isPass(m[1]), end, l, true
		}
		from = end
	}
	return false, 0, "", false
}

// disagreeing returns the first verdict in after (in a sentence, in a
// JSON object, or on a line that begins with an upper-case verdict token)
// that disagrees with pass, or could be a second verdict, or "".
func disagreeing(after string, pass bool) string {
	if textutil.ContainsFold(after, "verdict") {
		for _, m := range mentionRE.FindAllStringSubmatch(after, -1) {
			if isPass(m[1]) != pass {
				return m[0]
			}
		}
	}
	if strings.Contains(after, "PASS") || strings.Contains(after, "FAIL") {
		for l := range strings.SplitSeq(after, "\n") {
			m := tokenLineRE.FindStringSubmatchIndex(l)
			if m == nil {
				continue
			}
			if isPass(l[m[2]:m[3]]) != pass || secondVerdict(l[m[3]:]) != "" {
				return clipLine(l)
			}
		}
	}
	if strings.IndexByte(after, '{') >= 0 {
		for _, j := range jsonVerdicts(after) {
			if j.pass != pass || j.conflict {
				return oneLine(textutil.Clip(after[j.start:j.end], 80))
			}
		}
	}
	return ""
}

// disagreeingBefore returns the first verdict in before (what precedes
// the judge's last verdict) that disagrees with pass, or "": a verdict
// line holding one verdict token, a bare PASS or FAIL alone on its line
// (the value line of a split verdict among them), or a JSON verdict. A
// verdict inside a sentence is the judge's reasoning, and not read.
func disagreeingBefore(before string, pass bool) string {
	before = cutQuotedTails(before)
	if textutil.ContainsFold(before, "pass") || textutil.ContainsFold(before, "fail") {
		for l := range strings.SplitSeq(before, "\n") {
			if m := verdictLineRE.FindStringSubmatchIndex(l); m != nil {
				if isPass(l[m[2]:m[3]]) != pass && secondVerdict(l[m[3]:]) == "" {
					return clipLine(l)
				}
				continue
			}
			if m := verdictValueRE.FindStringSubmatch(l); m != nil && isPass(m[1]) != pass {
				return clipLine(l)
			}
		}
	}
	if strings.IndexByte(before, '{') >= 0 {
		for _, j := range jsonVerdicts(before) {
			if j.pass != pass && !j.conflict {
				return oneLine(textutil.Clip(before[j.start:j.end], 80))
			}
		}
	}
	return ""
}

// quotedTailRE is the candidate's mark or tool-call label inside a line:
// the judge quoted a rendered line inline ("It wrote: [tool call] f(…)").
var quotedTailRE = regexp.MustCompile(`(?i)\[(?:candidate wrote|tool call)\][^\n]*`)

// cutQuotedTails cuts each line of s at the candidate's mark or tool-call
// label: what follows one is the candidate's, whoever wrote the line.
func cutQuotedTails(s string) string {
	if !textutil.ContainsFold(s, "candidate wrote") && !textutil.ContainsFold(s, "tool call]") {
		return s
	}
	return quotedTailRE.ReplaceAllString(s, "")
}

func contradicted(pass bool, earlier string) string {
	return fmt.Sprintf("the judge's last verdict says %s, but it wrote %q before it: the answer is ambiguous (a verdict quoted from the candidate is read as the candidate's only when it is marked, or verbatim a line of the candidate's reply)",
		passWord(pass), earlier)
}

// isPass reads a verdict word. (?i) lets "ſ" stand for "s", so it decides
// on the first letter alone.
func isPass(word string) bool { return word[0]|0x20 == 'p' }

func passWord(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}

func defaultScore(pass bool) float64 {
	if pass {
		return 1
	}
	return 0
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
