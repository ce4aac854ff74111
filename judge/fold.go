package judge

import (
	"strings"
	"unicode"
)

// fold is s as a reader sees it, for deciding whether candidate text looks
// like a verdict or a tag: letters that imitate ASCII (fullwidth forms,
// mathematical and circled letters, Cyrillic and Greek capitals and small
// letters that look Latin, small capitals) become that ASCII letter, look-
// alike brackets, slashes and colons their ASCII sign, any space a space,
// invisible format characters and combining marks are dropped, and the
// whole is lower case. It is a detector, never shown: a line it flags is
// marked, its text is kept.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(unicode.ToLower(r))
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

// bracket returns '<' or '>' for an angle bracket or a look-alike of one,
// else 0.
func bracket(r rune) rune {
	switch r {
	case '<', '\uFF1C', '\uFE64', '\u2039', '\u3008', '\u27E8', '\u2329', '\u02C2', '\u1438', '\u227A', '\u276E', '\u276C':
		return '<'
	case '>', '\uFF1E', '\uFE65', '\u203A', '\u3009', '\u27E9', '\u232A', '\u02C3', '\u1433', '\u227B', '\u276F', '\u276D':
		return '>'
	}
	return 0
}

// lookAlike maps letters and signs that imitate ASCII ones.
var lookAlike = map[rune]rune{
	// Cyrillic
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'У': 'Y', 'Х': 'X', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W',
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'ѵ': 'v', 'Ѵ': 'V',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ο': 'o', 'ν': 'v', 'ι': 'i', 'α': 'a', 'ρ': 'p', 'κ': 'k',
	// Latin small capitals and others
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j',
	'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u',
	'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z', 'ı': 'i', 'ſ': 's', '\u212A': 'K', '\u212B': 'A',
	// Signs
	'⁄': '/', '∕': '/', '⧸': '/', '꞉': ':', '∶': ':', 'ː': ':', '˸': ':', '‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '−': '-',
	'“': '"', '”': '"', '„': '"', '‟': '"', '«': '"', '»': '"', '‘': '\'', '’': '\'',
}

// asciiLike returns the ASCII character r imitates, or 0.
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
	}
	return lookAlike[r]
}
