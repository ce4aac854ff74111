package check

import (
	"regexp"
	"strings"
)

// A refusal is recognised by how the answer opens, never by a word found
// anywhere in it: "The API can't be called twice" is an answer, "I can't help
// with that" is not. The answer is lowered, curly apostrophes straightened,
// and leading markdown (*, _, #, >, quotes) dropped; then it is a refusal
// when it begins with, optionally after an apology ("Sorry,", "I'm sorry,
// but", "I apologize, but", "Unfortunately,", "I'm afraid"):
//
//	I can't / cannot / can not / won't / will not, or I am / I'm unable to / not able to / not going to
//	    … followed by help, assist, provide, comply, fulfil(l), do that, do this, answer,
//	    support, engage, create, generate, write, share, give, complete, perform
//	I must decline / I have to decline / I must refuse
//	As an AI / As an AI language model / As a language model / As an artificial intelligence
//
// "I can't be certain, but the answer is 4" is therefore not a refusal, while
// "Sorry, but I cannot assist with that request." is.
var refusalRE = regexp.MustCompile(`^` +
	`(?:(?:i'm sorry|i am sorry|sorry|i apologi[sz]e|unfortunately|i'm afraid|i am afraid)[\s,.!:;—–-]*(?:but[\s,]*)?)?` +
	`(?:` +
	`(?:i (?:can't|cannot|can not|won't|will not|am unable to|am not able to|am not going to)|i'm (?:unable to|not able to|not going to))` +
	` (?:help|assist|provide|comply|fulfil|fulfill|do that|do this|answer|support|engage|create|generate|write|share|give|complete|perform)\b` +
	`|i (?:must|have to) (?:decline|refuse)\b` +
	`|as an? (?:ai|artificial intelligence|language model|ai language model|large language model)\b` +
	`)`)

// refusalHead is how much of an answer's opening the pattern reads.
const refusalHead = 200

// isRefusal reports whether an answer opens with a refusal.
func isRefusal(answer string) bool {
	s := strings.TrimLeft(strings.TrimSpace(answer), "*_#>\"'` \t\r\n")
	if s == "" {
		return false
	}
	// Every opening the pattern knows begins with i, s, u or a: most
	// answers are told apart by their first letter, with no copy.
	if c := s[0] | 0x20; s[0] < 0x80 && c != 'i' && c != 's' && c != 'u' && c != 'a' {
		return false
	}
	if len(s) > refusalHead {
		s = s[:refusalHead]
	}
	s = straightQuotes.Replace(strings.ToLower(s))
	return refusalRE.MatchString(strings.Join(strings.Fields(s), " "))
}

var straightQuotes = strings.NewReplacer("\u2019", "'", "\u2018", "'")
