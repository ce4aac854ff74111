package judge

import (
	"pitwall/internal/textutil"
	"regexp"
	"strings"
)

// The judge's own text: what is left of its answer once its thinking and
// whatever it echoed of the candidate are taken out (rules 1 and 2 of
// ParseReply).

var (
	thinkTagRE = regexp.MustCompile(`(?i)<(/?)think(?:ing)?[ \t]*>`)
	echoRE     = regexp.MustCompile(`(?is)<\s*candidate_output\s*>.*?<\s*/\s*candidate_output\s*>`)
	echoEndRE  = regexp.MustCompile(`(?i)<\s*/\s*candidate_output\s*>`)
	// markLineRE is a line that begins, after quoting marks, with the mark
	// RenderCandidate puts on the candidate's suspect lines, or with the
	// label it puts on each of the candidate's tool calls.
	markLineRE = regexp.MustCompile("(?im)^[ \\t>*#_|`-]*\\[(?:candidate wrote|tool call)\\].*(?:\n|$)")
)

// splitThink separates a judge's inline thinking from its answer: a
// <think>…</think> (or <thinking>) block is thinking, and a closing tag
// with no opening one makes everything before it thinking (chat templates
// that put <think> in the prompt). An opening tag that never closes makes
// the rest thinking only when nothing but space comes before it in the
// answer: a reasoning judge cut short. Anywhere else it is a tag the judge
// quoted (from a candidate's tool call, say), and the judge's own verdict
// after it must still count.
func splitThink(s string) (thinking, answer string) {
	if !textutil.ContainsFold(s, "think") {
		return "", s
	}
	tags := thinkTagRE.FindAllStringSubmatchIndex(s, -1)
	if len(tags) == 0 {
		return "", s
	}
	var th []string
	var ans strings.Builder
	pos, in, from, openAt := 0, false, 0, 0
	for _, t := range tags {
		open := t[3] == t[2] // no "/"
		switch {
		case !in && open:
			ans.WriteString(s[pos:t[0]])
			in, from, openAt = true, t[1], t[0]
		case !in: // a lone closing tag: all before it was thinking
			ans.WriteString(s[pos:t[0]])
			th = append(th, ans.String())
			ans.Reset()
			pos = t[1]
		case !open:
			th = append(th, s[from:t[0]])
			in, pos = false, t[1]
		}
		// An opening tag inside thinking is part of the thinking.
	}
	switch {
	case !in:
		ans.WriteString(s[pos:])
	case strings.TrimSpace(ans.String()) == "":
		th = append(th, s[from:])
	default:
		ans.WriteString(s[openAt:])
	}
	var kept []string
	for _, t := range th {
		if t = strings.TrimSpace(t); t != "" {
			kept = append(kept, t)
		}
	}
	return strings.Join(kept, "\n\n"), ans.String()
}

// dropMarked removes the lines RenderCandidate marked or wrote as the
// candidate's tool calls.
func dropMarked(answer string) string {
	// ContainsFold wants a word that starts with a letter.
	if textutil.ContainsFold(answer, "candidate wrote") || textutil.ContainsFold(answer, "tool call]") {
		return markLineRE.ReplaceAllString(answer, "")
	}
	return answer
}

// ownText removes from a judge's answer what it echoed of the candidate:
// <candidate_output> blocks, everything before a closing tag left without
// its opening one (the judge quoted the block's end), and the lines
// RenderCandidate marked or wrote as the candidate's tool calls. before is
// what went before such a closing tag, the blocks and marked lines taken
// out: it holds no verdict of the candidate's that was not unmarked, so a
// verdict in it is one the judge wrote (or quoted unmarked) before the
// tag, and it still counts against the verdict after (rule 5).
func ownText(answer string) (own, before string) {
	if textutil.ContainsFold(answer, "candidate_output") {
		answer = echoRE.ReplaceAllString(answer, "")
		if locs := echoEndRE.FindAllStringIndex(answer, -1); len(locs) > 0 {
			end := locs[len(locs)-1]
			before = echoEndRE.ReplaceAllString(answer[:end[0]], "\n")
			answer = answer[end[1]:]
		}
	}
	return dropMarked(answer), dropMarked(before)
}

// dropQuoted removes the lines of answer that are, spaces trimmed,
// verbatim a line of candidate (the reply as the server gave it) that
// RenderCandidate would mark: the judge quoted the candidate without the
// mark (rule 2a of ParseReply). Only those are the candidate's; a line the
// judge wrote that happens to match a plain line of the reply stays.
func dropQuoted(answer, candidate string) (string, int) {
	if strings.TrimSpace(candidate) == "" {
		return answer, 0
	}
	const unknown, theirs, plain = 0, 1, 2
	lines := make(map[string]int8)
	for l := range strings.SplitSeq(lineBreaks.Replace(candidate), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines[l] = unknown
		}
	}
	kept, dropped := make([]string, 0, strings.Count(answer, "\n")+1), 0
	for l := range strings.SplitSeq(answer, "\n") {
		t := strings.TrimSpace(l)
		if k, ok := lines[t]; ok {
			if k == unknown {
				// suspect is the costly part: only lines the judge quoted pay it.
				k = plain
				if suspect(t) {
					k = theirs
				}
				lines[t] = k
			}
			if k == theirs {
				dropped++
				continue
			}
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n"), dropped
}
