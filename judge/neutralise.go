package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"pitwall/gpu/chat"
	"pitwall/judge/check"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"
)

// How a candidate's reply reaches a judge. Everything the candidate
// controls (its text, the names and arguments of its tool calls) goes
// through RenderCandidate and nothing else, so that nothing it writes can
// pass for what the judge writes, or close the block it sits in:
//
//  1. Inline thinking is cut (check.Answer): the judge grades the answer.
//     The reasoning a server sends apart never reaches the judge either.
//  2. Every line break Unicode has (CR, LF, CRLF, and the rarer VT, FF,
//     NEL, U+2028 and U+2029) becomes LF, and each line that could be
//     read as a verdict, a score, a tag, a tool call or one of these marks
//     (see suspect) begins with candidateMark, and its angle brackets (and
//     their look-alikes) are written &lt; and &gt; and its ampersands
//     ＆ (fullwidth), so that a judge that decodes entities, once or
//     more, gets no tag or line break from an entity the candidate wrote. A line is suspect as written, and as an
//     entity-decoding reader sees it (&#86;ERDICT, &lt;/candidate_output&gt;,
//     named, decimal and hex entities, decoded up to maxDecodes times and
//     split at the line breaks that decoding makes), each form matched
//     after fold: NFKD compatibility forms (fullwidth ＶＥＲＤＩＣＴ,
//     Roman numeral Ⅴ), the confusable letters of Unicode's confusables
//     data (Cyrillic "VЕRDICT", Cherokee, Lisu, …), lower case. A line is
//     also suspect when it begins with PASS or FAIL, when it labels a
//     PASS or FAIL (`Veredicto: PASS`, `判定：FAIL`), or when it holds the
//     word for verdict in one of the major languages judges may answer in
//     (foreignVerdictRE). Parse drops every line that begins with the
//     mark, so a judge that echoes the candidate echoes nothing it reads;
//     and no tag of the candidate's closes <candidate_output> or opens a
//     <think> in the judge's answer.
//  3. Each tool call is one line, `[tool call] name({"a":1})`. A name that
//     is not a plain identifier is written as a JSON string. Arguments that
//     are JSON are compacted with <, >, their look-alikes and the line
//     breaks JSON allows raw in a string (NEL, U+2028, U+2029) \u-escaped
//     (the same JSON to a reader, no tag or new line to a parser);
//     arguments that are not JSON are kept, with line breaks written \n
//     and brackets escaped, so the judge still sees that they are broken.

// candidateMark begins a candidate's line that looks like something a judge
// writes. The built-in templates tell the judge what it means.
const candidateMark = "[candidate wrote]"

// RenderCandidate is a candidate's reply as a judge reads it: the answer
// text and then one line per tool call, neutralised as described above. It
// is the only way candidate text enters a judge prompt.
func RenderCandidate(content string, calls []chat.ToolCall) string {
	var b strings.Builder
	text := strings.TrimSpace(lineBreaks.Replace(check.Answer(content)))
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(neutraliseLine(line))
	}
	for _, c := range calls {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("[tool call] ")
		b.WriteString(toolName(c.Name))
		b.WriteByte('(')
		b.WriteString(toolArgs(c.Arguments))
		b.WriteByte(')')
	}
	return b.String()
}

// lineBreaks are what a reader may take for a new line: each starts one
// that is neutralised on its own.
// Python's str.splitlines breaks at the file, group and record separators
// (U+001C–U+001E) too, and the unit separator (U+001F) goes with them.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n",
	"\u0085", "\n", "\u2028", "\n", "\u2029", "\n", "\x1c", "\n", "\x1d", "\n", "\x1e", "\n", "\x1f", "\n")

// neutraliseLine marks one line of the candidate's text when it is suspect,
// and shows its tag characters (showTags) whether or not it is.
func neutraliseLine(line string) string {
	if !suspect(line) {
		return showTags(line)
	}
	return candidateMark + " " + escapeMarked(showTags(line))
}

// showTags writes each Unicode tag character (U+E0000–U+E007F, invisible:
// they spell ASCII that a model may read and a reader cannot see) as an
// escape, \u{E0056}, so that the judge sees that they are there.
func showTags(s string) string {
	if !strings.Contains(s, "\xf3\xa0") { // the first two bytes of every tag character in UTF-8
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isTag(r) {
			fmt.Fprintf(&b, "\\u{%X}", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

var (
	// Matched against fold(line), which is lower case ASCII where the line
	// imitates ASCII.
	verdictWordRE = regexp.MustCompile(`verdict|score[ \t*_"']*(?:[:=-]|is\b)|reason(?:ing)?[ \t*_"']*:|"pass(?:ed)?"|\\u[0-9a-f]{4}`)
	tagRE         = regexp.MustCompile(`<[ \t]*/?[ \t]*(?:think|task|criteria|reference|candidate[ \t]*[_-][ \t]*output)`)
	// fenceRE is the rest of a fence a line break may split: the fence's
	// name anywhere (its hyphen look-alikes are "-" after fold), a block
	// tag's name and its ">" at the start of a line, a "<" or "</" that
	// ends one.
	fenceRE = regexp.MustCompile(`candidate[ \t]*[_-][ \t]*output|^[ \t]*/?[ \t]*(?:think(?:ing)?|task|criteria|reference)[ \t]*>|<[ \t]*/?[ \t]*$`)
	// specialRE is a chat template's special token, of the common
	// families (ChatML, Llama 2 and 3, Gemma, GPT and DeepSeek's "<|"
	// and "<｜", sentence marks): a tokenizer may read one as a turn.
	specialRE = regexp.MustCompile(`<[ \t]*\||\[[ \t]*/?[ \t]*inst[ \t]*\]|<<[ \t]*/?[ \t]*sys[ \t]*>>|<[ \t]*/?[ \t]*s[ \t]*>|<[ \t]*/?[ \t]*(?:start|end)_of_turn|endoftext|eot_id|im_start|im_end|(?:start|end)_header_id`)
	// spacedRE is a word spelt one letter at a time, the letters apart:
	// "v e r d i c t", "v.e.r.d.i.c.t" (matched against fold).
	spacedRE = regexp.MustCompile(`\b(?:[a-z][ \t._*·•:-]+){2,}[a-z]\b`)
	markRE   = regexp.MustCompile("^[ \\t>*#_|`-]*\\[(?:tool call|candidate wrote|observation|step [0-9]+|final answer|agent trajectory)\\]")
	// tokenRE is a line that begins with a verdict word (the value line of
	// a split verdict, or a second verdict after the judge's), or that
	// labels one in any language: "Veredicto: PASS", "判定: fail".
	tokenRE = regexp.MustCompile("^[ \\t>*#_|`\"'\\[(-]*(?:pass|fail)(?:ed)?\\b|[:=][ \\t*_\"'\\[(]*(?:pass|fail)(?:ed)?\\b")
	// foreignVerdictRE is the word for verdict (or judgement, or the pass
	// and fail a judge might write) in the major languages other than
	// English: Spanish, Portuguese, French, Italian, German, Dutch,
	// Polish, Russian, Ukrainian, Chinese, Japanese and Korean. A line
	// holding one imitates a judge answering in that language.
	foreignVerdictRE = regexp.MustCompile(`veredicto|veredito|verdetto|urteil|oordeel|werdykt|вердикт|приговор|вирок|判定|判决|判決|裁决|裁決|评决|評決|판정|평결|aprobado|reprobado|aprovado|reprovado|réussi|reussi|échoué|echoue|bestanden|superato|bocciato|пройден|провален|合格|不通过|不通過|통과|실패|합격`)
)

// suspect reports whether a line of candidate text could be read as judge
// output: the word verdict (in English or another major language)
// anywhere, a score or reason label, a "pass" JSON key or a \u escape
// (which could spell one), a think or block tag, a tool-call line, a mark
// or one of RenderTrajectory's labels at its start, a verdict word at its
// start or after a label. Each form of the line decodedForms gives is
// tried. It errs towards marking: a marked line loses nothing but its
// place in what Parse reads.
func suspect(line string) bool {
	for _, form := range decodedForms(line) {
		if suspectFolded(fold(form)) || foreignVerdict(form) {
			return true
		}
	}
	return false
}

// suspectFolded is suspect for one folded form of a line, but for
// foreignVerdict.
func suspectFolded(f string) bool {
	if suspectWords(f) || suspectShape(f) {
		return true
	}
	// A word spelt one letter at a time is read as the word.
	if strings.ContainsAny(f, " \t._*·•:-") && spacedRE.MatchString(f) {
		return suspectWords(spacedRE.ReplaceAllStringFunc(f, unspace))
	}
	return false
}

// suspectWords is suspectFolded for the verdict, score and reason words,
// the tags and the marks.
func suspectWords(f string) bool {
	// Each pattern needs a word or a character the line may well lack: a
	// line with none of them is told apart without a regular expression
	// (FuzzSuspectShortcuts holds the two to the same answer).
	return strings.Contains(f, "<") && tagRE.MatchString(f) ||
		strings.Contains(f, "[") && markRE.MatchString(f) ||
		mayNameVerdict(f) && verdictWordRE.MatchString(f) ||
		(strings.Contains(f, "pass") || strings.Contains(f, "fail")) && tokenRE.MatchString(f)
}

// suspectShape is suspectFolded for the pieces of a fence and a chat
// template's special tokens.
func suspectShape(f string) bool {
	return (strings.Contains(f, "candidate") || strings.Contains(f, ">") || strings.Contains(f, "<")) && fenceRE.MatchString(f) ||
		mayBeSpecial(f) && specialRE.MatchString(f)
}

// mayBeSpecial is false for a folded line that specialRE cannot match.
func mayBeSpecial(f string) bool {
	return strings.Contains(f, "<") || strings.Contains(f, "inst") || strings.Contains(f, "_id") ||
		strings.Contains(f, "im_") || strings.Contains(f, "endoftext")
}

// unspace is a spelt-out word with its letters together: "v e r d i c t :
// p a s s" is "verdict:pass".
func unspace(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r == ':' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// foreignVerdict reports whether a line holds a foreign word for verdict,
// as written (lower case: NFKD would split a Hangul syllable, and the
// confusables fold would make Cyrillic Latin) or folded (accents and
// look-alike letters gone).
func foreignVerdict(form string) bool {
	if isASCII(form) && !mayNameForeignVerdict(strings.ToLower(form)) {
		return false
	}
	return foreignVerdictRE.MatchString(strings.ToLower(form)) || foreignVerdictRE.MatchString(fold(form))
}

// mayNameForeignVerdict is false for an ASCII line, in lower case, that
// foreignVerdictRE cannot match.
func mayNameForeignVerdict(f string) bool {
	for _, w := range foreignASCII {
		if strings.Contains(f, w) {
			return true
		}
	}
	return false
}

// foreignASCII holds a part of each ASCII word of foreignVerdictRE.
var foreignASCII = []string{"vere", "verdetto", "urteil", "oordeel", "werdykt", "prova", "proba", "reussi", "echoue",
	"bestanden", "superato", "bocciato"}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// mayNameVerdict is false for a folded line that verdictWordRE cannot
// match: one with none of the words it starts with.
func mayNameVerdict(f string) bool {
	return strings.Contains(f, "verdict") || strings.Contains(f, "score") || strings.Contains(f, "reason") ||
		strings.Contains(f, `"pass`) || strings.Contains(f, `\u`)
}

// escapeMarked escapes a marked line: its ampersands become fullwidth
// ampersands (U+FF06), so that no entity the candidate wrote decodes to a
// tag or a line break however many times a judge decodes, and its angle
// brackets and their look-alikes are escaped (escapeBrackets).
func escapeMarked(s string) string {
	return escapeBrackets(breakSpecials.Replace(strings.ReplaceAll(s, "&", "\uFF06")))
}

// breakSpecials breaks the special tokens whose brackets escapeBrackets
// does not reach (and, for a judge that decodes what it reads, those it
// does): a space after the opening bracket.
var breakSpecials = strings.NewReplacer("<|", "< |", "<\uFF5C", "< \uFF5C", "[INST]", "[ INST]", "[/INST]", "[ /INST]")

// escapeBrackets writes every angle bracket of s, and every look-alike of
// one, as &lt; or &gt;.
func escapeBrackets(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch bracket(r) {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

func toolName(name string) string {
	if plainName.MatchString(name) {
		return name
	}
	return jsonEscapeBrackets(mustMarshal(name))
}

func toolArgs(args string) string {
	if strings.TrimSpace(args) == "" {
		return ""
	}
	if json.Valid([]byte(args)) {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(args)); err == nil {
			return jsonEscapeBrackets(b.String())
		}
	}
	return escapeMarked(strings.ReplaceAll(lineBreaks.Replace(args), "\n", `\n`))
}

// jsonEscapeBrackets \u-escapes the angle brackets and their look-alikes
// in JSON text, its ampersands (an entity-decoding judge would read
// &#10; as a new line), and the line breaks JSON allows raw in a string
// (NEL, U+2028, U+2029). Outside strings JSON has none, so the value is
// unchanged.
func jsonEscapeBrackets(s string) string {
	var b strings.Builder
	for _, r := range s {
		if bracket(r) != 0 || r == '&' || r == '\u0085' || r == '\u2028' || r == '\u2029' || isTag(r) {
			if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
				writeU(&b, r1)
				r = r2
			}
			writeU(&b, r)
			continue
		}
		b.WriteRune(r)
	}
	return jsonBreakSpecials.Replace(b.String())
}

// writeU writes r, at most U+FFFF, as a JSON \u escape.
func writeU(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	const hex = "0123456789abcdef"
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xf])
	}
}

// jsonBreakSpecials breaks the special tokens in bracket-less JSON text
// that jsonEscapeBrackets leaves: "[INST]" is no JSON outside a string.
var jsonBreakSpecials = strings.NewReplacer("[INST]", `\u005bINST]`, "[/INST]", `\u005b/INST]`)

func mustMarshal(s string) string {
	out, _ := json.Marshal(s) // a string always marshals
	return string(out)
}

// Step is one model turn of an agent's trajectory as a judge reads it: the
// model's text, its tool calls, and the observation each call was answered
// with (Observations[i] answers Calls[i]).
type Step struct {
	Text         string
	Calls        []chat.ToolCall
	Observations []string
}

// RenderTrajectory is an agent's tool loop as a judge reads it, every part
// of it through RenderCandidate's rules: a header line, then for each step
// a `[step N]` line, the model's text (thinking cut, each line neutralised),
// and each call as a `[tool call]` line followed by an `[observation]` line
// and the observation's lines, neutralised too (a mock's answer can echo the
// call's arguments). A last step without calls is the final answer, under
// `[final answer]`. A line of text or observation that imitates one of these
// labels is marked as the candidate's, so nothing in a step can forge
// another step, a call or an observation.
func RenderTrajectory(steps []Step) string {
	var b strings.Builder
	calls := 0
	for _, s := range steps {
		calls += len(s.Calls)
	}
	end := "ended without a final answer"
	if n := len(steps); n > 0 && len(steps[n-1].Calls) == 0 {
		end = "ended with a final answer"
	}
	fmt.Fprintf(&b, "[agent trajectory] %d model turns, %d tool calls, %s; each call is followed by the observation it was answered with", len(steps), calls, end)
	for i, s := range steps {
		final := i == len(steps)-1 && len(s.Calls) == 0
		if final {
			b.WriteString("\n[final answer]")
		} else {
			fmt.Fprintf(&b, "\n[step %d]", i+1)
		}
		if text := RenderCandidate(s.Text, nil); text != "" {
			b.WriteString("\n" + text)
		}
		for k, c := range s.Calls {
			b.WriteString("\n" + RenderCandidate("", []chat.ToolCall{c}))
			b.WriteString("\n[observation]")
			obs := ""
			if k < len(s.Observations) {
				obs = s.Observations[k]
			}
			obs = strings.TrimSpace(lineBreaks.Replace(obs))
			if obs == "" {
				b.WriteString("\n(empty)")
				continue
			}
			for _, line := range strings.Split(obs, "\n") {
				b.WriteString("\n" + neutraliseLine(line))
			}
		}
	}
	return b.String()
}
