package judge

import (
	"html"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// fold is s as a reader sees it, for deciding whether candidate text looks
// like a verdict or a tag. In order:
//
//   - NFKD, the compatibility decomposition: fullwidth and mathematical
//     letters, Roman numerals (Ⅴ, ⅰ), ligatures, superscripts and circled
//     letters become the letters they stand for, and an accented letter
//     becomes its letter and a mark;
//   - Unicode tag characters (U+E0020–U+E007E) are the ASCII they shadow;
//   - other invisible format characters and combining marks are dropped,
//     any space is a space;
//   - letters that only look like ASCII ones (confusable below: Cyrillic,
//     Greek, Cherokee, Lisu, Coptic, Armenian, Canadian syllabics, …) and
//     look-alike brackets, slashes and colons become the ASCII they imitate;
//   - the whole is lower case.
//
// It is a detector, never shown: a line it flags is marked, its text is
// kept. HTML entities are decoded by decodedForms, before fold.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		s = norm.NFKD.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(unicode.ToLower(r))
			continue
		case r >= 0xE0020 && r <= 0xE007E:
			// A tag character spells the ASCII it shadows to a model's
			// tokenizer, unseen: it is read as that character.
			b.WriteRune(unicode.ToLower(r - 0xE0000))
			continue
		case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r):
			continue // zero-width spaces, joiners, soft hyphens, accents
		case unicode.IsSpace(r):
			b.WriteByte(' ')
			continue
		}
		if c := bracket(r); c != 0 {
			b.WriteRune(c)
			continue
		}
		if c := asciiLike(r); c != 0 {
			b.WriteRune(unicode.ToLower(c))
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// maxDecodes bounds how many times decodedForms decodes entities: a judge
// may decode once, or twice (&amp;#86; is &#86; is V); more is not seen.
const maxDecodes = 3

// decodedForms is s and what an entity-decoding reader makes of it, once
// and again (at most maxDecodes times, until nothing changes), each split
// at the line breaks the decoding produced (&#10;, &#x2028;, &NewLine;).
// A line of candidate text is suspect when any of these is.
func decodedForms(s string) []string {
	forms := []string{s}
	for range maxDecodes {
		if strings.IndexByte(s, '&') < 0 {
			break
		}
		d := html.UnescapeString(s)
		if d == s {
			break
		}
		s = d
		forms = append(forms, strings.Split(lineBreaks.Replace(d), "\n")...)
	}
	return forms
}

// bracket returns '<' or '>' for an angle bracket or a look-alike of one,
// else 0.
func bracket(r rune) rune {
	switch r {
	case '<', '\uFF1C', '\uFE64', '\u2039', '\u3008', '\u27E8', '\u2329', '\u02C2', '\u1438', '\u227A', '\u276E', '\u276C', '\U0001D236':
		return '<'
	case '>', '\uFF1E', '\uFE65', '\u203A', '\u3009', '\u27E9', '\u232A', '\u02C3', '\u1433', '\u227B', '\u276F', '\u276D', '\U0001D237', '\U00016F3F':
		return '>'
	}
	return 0
}

// confusable maps letters and signs that imitate ASCII ones and that NFKD
// leaves alone. The letters are hand-derived from Unicode's confusables
// data (UTS #39, confusables.txt: the entries whose target is one ASCII
// letter, which covers every letter of the verdict, score, reason and
// fence words), for the scripts an attacker can type: Cyrillic, Greek,
// Coptic, Armenian, Cherokee (its small letters are looked up by their
// capitals, see asciiLike), Lisu, Canadian syllabics, Latin small capitals
// and letter variants, Warang Citi, Osage, Deseret, Lycian, Carian, Old
// Italic, Elbasan, Miao, Tifinagh, Runic, Bamum, Hebrew, and a few
// mathematical signs. Roman numerals, fullwidth, mathematical and
// letterlike forms (ℂ, ℓ) are NFKD's, not listed here.
var confusable = map[rune]rune{
	// Cyrillic
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'У': 'Y', 'Х': 'X', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ԍ': 'G', 'Ӏ': 'I',
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'ѵ': 'v', 'Ѵ': 'V', 'ҽ': 'e', 'ѡ': 'w', 'ꙇ': 'i',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ο': 'o', 'ν': 'v', 'ι': 'i', 'α': 'a', 'ρ': 'p', 'κ': 'k',
	'ϲ': 'c', 'Ϲ': 'C', 'Ϝ': 'F', 'ϝ': 'f', 'Ϻ': 'M', 'ϱ': 'p', 'σ': 'o', 'υ': 'u',
	// Coptic
	'Ⲥ': 'C', 'ⲥ': 'c', 'Ⲏ': 'H', 'Ⲓ': 'I', 'Ⲕ': 'K', 'ⲕ': 'k', 'Ⲙ': 'M', 'Ⲛ': 'N', 'Ⲟ': 'O', 'ⲟ': 'o',
	'Ⲣ': 'P', 'ⲣ': 'p', 'Ⲧ': 'T', 'Ⳑ': 'L', 'ⲅ': 'r',
	// Armenian
	'Օ': 'O', 'օ': 'o', 'Տ': 'S', 'Ս': 'U', 'ս': 'u', 'ո': 'n', 'ռ': 'n', 'հ': 'h', 'ց': 'g', 'գ': 'q',
	'զ': 'q', 'ք': 'f', 'ա': 'w',
	// Cherokee
	'Ꭰ': 'D', 'Ꭱ': 'R', 'Ꭲ': 'T', 'Ꭵ': 'i', 'Ꭹ': 'Y', 'Ꭺ': 'A', 'Ꭻ': 'J', 'Ꭼ': 'E', 'Ꮃ': 'W', 'Ꮇ': 'M',
	'Ꮋ': 'H', 'Ꮐ': 'G', 'Ꮒ': 'h', 'Ꮓ': 'Z', 'Ꮟ': 'b', 'Ꮢ': 'R', 'Ꮤ': 'W', 'Ꮥ': 'S', 'Ꮩ': 'V', 'Ꮪ': 'S',
	'Ꮮ': 'L', 'Ꮯ': 'C', 'Ꮲ': 'P', 'Ꮶ': 'K', 'Ꮷ': 'd', 'Ᏻ': 'G', 'Ᏼ': 'B', 'ꮁ': 'r',
	// Lisu
	'ꓐ': 'B', 'ꓑ': 'P', 'ꓒ': 'd', 'ꓓ': 'D', 'ꓔ': 'T', 'ꓖ': 'G', 'ꓗ': 'K', 'ꓙ': 'J', 'ꓚ': 'C', 'ꓜ': 'Z',
	'ꓝ': 'F', 'ꓟ': 'M', 'ꓠ': 'N', 'ꓡ': 'L', 'ꓢ': 'S', 'ꓣ': 'R', 'ꓦ': 'V', 'ꓧ': 'H', 'ꓪ': 'W', 'ꓫ': 'X',
	'ꓬ': 'Y', 'ꓮ': 'A', 'ꓰ': 'E', 'ꓲ': 'I', 'ꓳ': 'O', 'ꓴ': 'U',
	// Canadian syllabics
	'ᗅ': 'A', 'ᗷ': 'B', 'ᑲ': 'b', 'ᖯ': 'b', 'ᑯ': 'd', 'ᗞ': 'D', 'ᗪ': 'D', 'ᖴ': 'F', 'ᕼ': 'H', 'ᒍ': 'J',
	'ᒪ': 'L', 'ᗰ': 'M', 'ᑭ': 'P', 'ᖇ': 'R', 'ᑌ': 'U', 'ᐯ': 'V', '᙭': 'X', 'ᕁ': 'x', 'ᕽ': 'x',
	// Latin small capitals and letter variants
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j',
	'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u',
	'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z', 'ı': 'i', 'ɩ': 'i', 'Ɩ': 'I', 'Ʀ': 'R', 'Ƅ': 'b', 'ɡ': 'g',
	'ʋ': 'u', 'ɯ': 'w', 'Ꞵ': 'B', 'Ꞙ': 'F', 'ꞙ': 'f', 'Ɑ': 'A', 'ɑ': 'a', 'Ʝ': 'J', 'ƽ': 's', 'ᴑ': 'o',
	'ꬲ': 'e', 'ꬵ': 'f', 'ꭇ': 'r', 'ꭈ': 'r', 'ꭎ': 'u', 'ꭒ': 'u', 'ꬽ': 'o', 'ꞟ': 'u', 'ƍ': 'g', 'ᶃ': 'g',
	'\u212A': 'K', '\u212B': 'A',
	// Warang Citi, Osage, Deseret
	'\U000118A6': 'E', '\U000118AE': 'E', '\U000118A2': 'F', '\U000118C2': 'F', '\U000118A3': 'L', '\U000118B2': 'L',
	'\U000118B5': 'O', '\U000118BC': 'T', '\U000118B8': 'U', '\U000118A0': 'V', '\U000118C3': 'i', '\U000118C1': 's',
	'\U000118C0': 'v', '\U000118C8': 'o', '\U000118D7': 'o', '\U000118D8': 'u',
	'\U000104C2': 'O', '\U000104EA': 'o', '\U000104B4': 'R', '\U000104CE': 'U', '\U000104F6': 'u',
	'\U00010415': 'C', '\U0001043D': 'c', '\U0001041B': 'L', '\U00010404': 'O', '\U0001042C': 'o', '\U00010420': 'S', '\U00010448': 's',
	// Lycian, Carian, Old Italic, Elbasan, Miao
	'\U000102A0': 'A', '\U00010282': 'B', '\U000102A1': 'B', '\U00010301': 'B', '\U000102A2': 'C', '\U00010302': 'C',
	'\U00010286': 'E', '\U00010287': 'F', '\U000102A5': 'F', '\U000102CF': 'H', '\U0001028A': 'I', '\U00010309': 'I',
	'\U00010311': 'M', '\U000102B0': 'M', '\U00010292': 'O', '\U000102AB': 'O', '\U00010295': 'P', '\U00010296': 'S',
	'\U00010297': 'T', '\U000102B1': 'T', '\U00010315': 'T',
	'\U0001051C': 'C', '\U00010525': 'F', '\U00010518': 'K', '\U00010526': 'L', '\U00010513': 'N', '\U00010516': 'O', '\U0001051D': 'V',
	'\U00016F40': 'A', '\U00016F28': 'I', '\U00016F16': 'L', '\U00016F35': 'R', '\U00016F3A': 'S', '\U00016F0A': 'T',
	'\U00016F42': 'U', '\U00016F08': 'V',
	// Tifinagh, Runic, Bamum, Ethiopic, Hebrew and others
	'ⴹ': 'E', 'ⵏ': 'I', 'ⵔ': 'O', 'ⵕ': 'Q', 'ⴸ': 'V', 'ᛕ': 'K', 'ᛁ': 'I', 'ᛖ': 'M', 'ꛟ': 'V', 'ዐ': 'O',
	'ሀ': 'U', 'ס': 'o', 'ו': 'l', 'ן': 'l', 'ט': 'v', '׀': 'l', 'ဝ': 'o', 'ഠ': 'o', 'ଠ': 'O', 'ჿ': 'o', '〇': 'O',
	// Signs that look like letters
	'⊤': 'T', '⟙': 'T', '∨': 'v', '⋁': 'v', '∪': 'U', '⋃': 'U', '×': 'x', '⨯': 'x', '╳': 'X', '⍺': 'a',
	'⍳': 'i', '⍴': 'p', '⋿': 'E', '℮': 'e',
	// Signs
	'⁄': '/', '∕': '/', '⧸': '/', '꞉': ':', '∶': ':', 'ː': ':', '˸': ':', '‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '−': '-',
	'“': '"', '”': '"', '„': '"', '‟': '"', '«': '"', '»': '"', '‘': '\'', '’': '\'', 'ǀ': '|', '∣': '|', '￨': '|',
}

// asciiLike returns the ASCII character r imitates, or 0. NFKD has
// already made fullwidth, mathematical and circled letters ASCII; the
// ranges stay for callers that fold without it.
func asciiLike(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return r - 0xFEE0
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters, 52 to a style
		if i := (r - 0x1D400) % 52; i < 26 {
			return 'A' + i
		} else {
			return 'a' + i - 26
		}
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits, 10 to a style
		return '0' + (r-0x1D7CE)%10
	case r >= 0x24B6 && r <= 0x24CF: // circled capitals
		return 'A' + r - 0x24B6
	case r >= 0x24D0 && r <= 0x24E9: // circled small letters
		return 'a' + r - 0x24D0
	case r >= 0x1F130 && r <= 0x1F149: // squared capitals
		return 'A' + r - 0x1F130
	case r >= 0x1F170 && r <= 0x1F189: // negative squared capitals
		return 'A' + r - 0x1F170
	case r >= 0xAB70 && r <= 0xABBF, r >= 0x13F8 && r <= 0x13FD: // Cherokee small letters look like their capitals
		r = unicode.ToUpper(r)
	}
	return confusable[r]
}
