package redact

import (
	"net/http"
	"net/url"
	"strings"
)

// Mask is what a credential is replaced with.
const Mask = "REDACTED"

// URL masks the credentials in one URL: its userinfo as a whole (a key is
// often written as the user name) and the value of every query or fragment
// parameter whose name is not on the allow-list (see Allowed), a bare
// parameter (?SECRET) included. Masking by default is what catches the keys
// no list of names foresees (Azure Functions' ?code=, a gateway's ?pass=).
// It works on the text rather than on a parsed url.URL, so it masks strings
// url.Parse refuses too and leaves the rest of the URL exactly as written.
func URL(s string) string {
	if s == "" {
		return s
	}
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	end := start + strings.IndexAny(s[start:], "/?#")
	if end < start {
		end = len(s)
	}
	if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
		s = s[:start] + Mask + s[start+at:]
	}
	q := strings.IndexAny(s, "?#")
	if q < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:q])
	rest := s[q:]
	for rest != "" {
		// rest starts with a separator: '?', '#', '&' or ';'.
		b.WriteByte(rest[0])
		rest = rest[1:]
		n := strings.IndexAny(rest, "&;#")
		if n < 0 {
			n = len(rest)
		}
		b.WriteString(maskParam(rest[:n]))
		rest = rest[n:]
	}
	return b.String()
}

// maskParam masks the value of one name=value pair unless its name is on
// the allow-list; a parameter without '=' may be a key itself and is
// masked whole.
func maskParam(p string) string {
	if p == "" {
		return p
	}
	name, _, ok := strings.Cut(p, "=")
	if !ok {
		if Allowed(p) {
			return p
		}
		return Mask
	}
	if Allowed(name) {
		return p
	}
	return name + "=" + Mask
}

// allowed are the query parameters whose values say which API is meant and
// are never a credential: Azure OpenAI's api-version (kept so that a masked
// URL still says which version was called), and the model or deployment a
// gateway routes by. The list is short on purpose: every other value is
// masked, whatever its name.
var allowed = []string{"api-version", "model", "deployment"}

// Allowed reports whether a query parameter's value is shown as written:
// its name (unescaped, in any case) is on the allow-list, api-version,
// model and deployment.
func Allowed(name string) bool {
	if un, err := url.QueryUnescape(name); err == nil {
		name = un
	}
	name = strings.ToLower(strings.TrimSpace(name))
	for _, a := range allowed {
		if name == a {
			return true
		}
	}
	return false
}

// AllowedParams is the allow-list, for documentation and messages.
func AllowedParams() []string { return append([]string(nil), allowed...) }

// Text masks every URL in s (from a scheme's "://" to the next blank,
// quote or angle bracket) and every bearer or basic credential, so that an
// error that quotes a request's URL, such as net/http's
// `Get "http://user:pw@host/v1/models": ...`, can be shown and stored.
func Text(s string) string {
	if strings.Contains(s, "://") {
		s = maskURLs(s)
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = maskPairs(s)
	}
	return maskAuthSchemes(s)
}

// maskPairs masks the value of every name=value in s whose name is
// key-like (a setting written into a message), and of every pair that
// follows '?' or '&' unless its name is allowed: the query of a URL quoted
// without its scheme and host ("/v1?code=...").
func maskPairs(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := eq
		for start > 0 && isNameByte(s[start-1]) {
			start--
		}
		end := eq + 1
		for end < len(s) && !isValueEnd(s[end]) {
			end++
		}
		b.WriteString(s[:eq+1])
		inQuery := start > 0 && (s[start-1] == '?' || s[start-1] == '&')
		secret := SensitiveName(s[start:eq]) || inQuery && !Allowed(s[start:eq])
		if start < eq && end > eq+1 && secret && s[eq+1:end] != Mask {
			b.WriteString(Mask)
		} else {
			b.WriteString(s[eq+1 : end])
		}
		s = s[end:]
	}
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '%'
}

func isValueEnd(c byte) bool {
	return c == '&' || c == ';' || c == '#' || c == ',' || c == ')' || isURLEnd(c)
}

func maskURLs(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i
		for start > 0 && isSchemeByte(s[start-1]) {
			start--
		}
		end := i + len("://")
		for end < len(s) && !isURLEnd(s[end]) {
			end++
		}
		b.WriteString(s[:start])
		b.WriteString(URL(s[start:end]))
		s = s[end:]
	}
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

func isURLEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>', '\\':
		return true
	}
	return false
}

// maskAuthSchemes masks the credential after "Bearer " (any case), as an
// Authorization header written into a message has it. Only what looks like
// a key is masked (8 bytes or more, not all letters), so that "missing
// bearer token" still reads as written.
func maskAuthSchemes(s string) string {
	lower := asciiLower(s) // same length as s, unlike strings.ToLower
	if !strings.Contains(lower, bearer) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(lower, bearer)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		i += len(bearer)
		j := i
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		b.WriteString(s[:i])
		if looksLikeKey(s[i:j]) {
			b.WriteString(Mask)
		} else {
			b.WriteString(s[i:j])
		}
		s, lower = s[j:], lower[j:]
	}
}

const bearer = "bearer "

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func looksLikeKey(tok string) bool {
	if len(tok) < 8 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i] | 0x20; c < 'a' || c > 'z' {
			return true
		}
	}
	return false
}

// isTokenByte reports the bytes of a token68 credential (RFC 7235) and of
// the keys hosted APIs issue (sk-..., base64, JWTs).
func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("-._~+/=", c) >= 0
}

// Secrets replaces each of secrets in s with Mask: the values of keys
// pitwall holds (from api_key_env), should a server echo one back in an
// error. Secrets shorter than 4 bytes are left alone: masking them would
// blank out ordinary words and prove nothing.
func Secrets(s string, secrets ...string) string {
	for _, v := range secrets {
		if len(v) >= 4 && strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// Header returns a copy of h whose credential headers (see HeaderValue)
// hold Mask; h is not changed.
func Header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for name, vals := range h {
		cp := make([]string, len(vals))
		for i, v := range vals {
			cp[i] = HeaderValue(name, v)
		}
		out[name] = cp
	}
	return out
}

// HeaderValue masks value when the header name carries a credential:
// Authorization and Proxy-Authorization (keeping the scheme: "Bearer
// REDACTED"), Cookie and Set-Cookie, and any key-like name (X-Api-Key,
// Api-Key, X-Goog-Api-Key, Ocp-Apim-Subscription-Key, X-Auth-Token).
func HeaderValue(name, value string) string {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization":
		if scheme, _, ok := strings.Cut(value, " "); ok {
			return scheme + " " + Mask
		}
		return Mask
	case "cookie", "set-cookie":
		return Mask
	}
	if SensitiveName(name) {
		return Mask
	}
	return value
}

// sensitiveParts are words that, as one part of a name split at '-', '_'
// or '.', mark its value as a credential (X-Amz-Signature, access_token).
var sensitiveParts = map[string]bool{
	"key": true, "apikey": true, "token": true, "secret": true, "password": true, "passwd": true,
	"pwd": true, "sig": true, "signature": true, "auth": true, "credential": true, "credentials": true,
}

// sensitiveSuffixes catch the same words run together (apiKey,
// subscriptionkey, accesstoken, clientSecret).
var sensitiveSuffixes = []string{"key", "token", "secret", "password", "signature"}

// SensitiveName reports whether a query parameter or header name says its
// value is a credential: key, api_key, apikey, api-key, token,
// access_token, sig, signature, password, secret, auth and names built
// from them. It errs toward masking: a parameter called "monkey" is masked
// too, which costs nothing.
func SensitiveName(name string) bool {
	lower := strings.ToLower(strings.TrimSpace(name))
	joined := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r == ' ' {
			return -1
		}
		return r
	}, lower)
	if sensitiveParts[joined] {
		return true
	}
	for _, part := range strings.FieldsFunc(lower, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ' ' }) {
		if sensitiveParts[part] {
			return true
		}
	}
	for _, suf := range sensitiveSuffixes {
		if strings.HasSuffix(joined, suf) {
			return true
		}
	}
	return false
}
