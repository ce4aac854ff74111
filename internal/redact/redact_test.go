package redact

import (
	"net/http"
	"strings"
	"testing"
)

func TestURLMasksCredentialsAndKeepsTheRest(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"no credentials stay as written", "http://127.0.0.1:1234/v1", "http://127.0.0.1:1234/v1"},
		{"user and password", "http://user:Pa55word@host:8080/v1", "http://REDACTED@host:8080/v1"},
		{"a key as the user name", "https://sk-live-123@api.example.com/v1", "https://REDACTED@api.example.com/v1"},
		{"an @ in the path is not userinfo", "http://host/v1/models/a@b", "http://host/v1/models/a@b"},
		{"?key=", "https://host/v1?key=AIzaSECRET", "https://host/v1?key=REDACTED"},
		{"every value is masked, in its place",
			"https://host/v1?b=2&api_key=S3CRET&a=%20x&token=T0K", "https://host/v1?b=REDACTED&api_key=REDACTED&a=REDACTED&token=REDACTED"},
		{"Azure Functions' ?code=", "https://f.azurewebsites.net/api/v1?code=AzFn-SECRET==", "https://f.azurewebsites.net/api/v1?code=REDACTED"},
		{"?pass=", "http://gw/v1?user=me&pass=SECRET", "http://gw/v1?user=REDACTED&pass=REDACTED"},
		{"the allow-list is kept", "http://h/v1?api-version=2024-10-21&code=S&Model=m1&deployment=d",
			"http://h/v1?api-version=2024-10-21&code=REDACTED&Model=m1&deployment=d"},
		{"an escaped allowed name", "http://h/v1?api%2Dversion=2024", "http://h/v1?api%2Dversion=2024"},
		{"names in any case and spelling",
			"https://h/?API-KEY=1&apiKey=2&Access_Token=3&sig=4&X-Amz-Signature=5&password=6&client_secret=7&subscription-key=8",
			"https://h/?API-KEY=REDACTED&apiKey=REDACTED&Access_Token=REDACTED&sig=REDACTED&X-Amz-Signature=REDACTED&password=REDACTED&client_secret=REDACTED&subscription-key=REDACTED"},
		{"an escaped name is read unescaped", "https://h/?api%5Fkey=s", "https://h/?api%5Fkey=REDACTED"},
		{"a fragment's parameters too", "https://h/cb#access_token=abc&state=1", "https://h/cb#access_token=REDACTED&state=REDACTED"},
		{"a bare parameter may be the key itself", "https://h/?sk-SECRET&api-version&x=1", "https://h/?REDACTED&api-version&x=REDACTED"},
		{"unparseable URLs are masked all the same", "http://u:p%zz@host/v1?key=%zz", "http://REDACTED@host/v1?key=REDACTED"},
		{"no scheme", "user:pw@host/v1", "REDACTED@host/v1"},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := URL(tt.in); got != tt.want {
				t.Errorf("URL(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := URL(URL(tt.in)); again != URL(tt.in) {
				t.Errorf("URL is not idempotent: %q then %q", URL(tt.in), again)
			}
		})
	}
}

func TestTextMasksEveryURLAndBearerToken(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"net/http's error", `Get "http://alice:hunter2@10.0.0.5:1234/v1/models": dial tcp 10.0.0.5:1234: connect: connection refused`,
			`Get "http://REDACTED@10.0.0.5:1234/v1/models": dial tcp 10.0.0.5:1234: connect: connection refused`},
		{"two URLs", "from https://a/?key=k1 to http://u:p@b/x done", "from https://a/?key=REDACTED to http://REDACTED@b/x done"},
		{"a bearer token", "sent Authorization: Bearer sk-proj-AbC123 and failed", "sent Authorization: Bearer REDACTED and failed"},
		{"BEARER in capitals", "BEARER eyJhbGciOi.x.y", "BEARER REDACTED"},
		{"words after bearer are not keys", "missing bearer token", "missing bearer token"},
		{"plain text is untouched", "the server sent no completion chunks", "the server sent no completion chunks"},
		{"a query quoted without its host", "bad key for /v1?key=QK1/chat/completions", "bad key for /v1?key=REDACTED"},
		{"any query value quoted without its host", "POST /v1/chat/completions?api-version=1&code=C0DE&pass=P, then",
			"POST /v1/chat/completions?api-version=1&code=REDACTED&pass=REDACTED, then"},
		{"a URL in text with ?code=", `Post "https://f.example/api?code=C0DE": EOF`, `Post "https://f.example/api?code=REDACTED": EOF`},
		{"a setting in a message", "retry with api_key=abc123, or not", "retry with api_key=REDACTED, or not"},
		{"ordinary settings stay", "max_tokens=5 prompt_tokens=10 a=b", "max_tokens=5 prompt_tokens=10 a=b"},
		{"non-ASCII around a token", "İstanbul: Bearer abc-12345678 ü", "İstanbul: Bearer REDACTED ü"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHeaderMasksCredentialHeaders(t *testing.T) {
	h := http.Header{
		"Authorization":             {"Bearer sk-TOPSECRET"},
		"X-Api-Key":                 {"xk-TOPSECRET"},
		"Api-Key":                   {"azure-TOPSECRET"},
		"Ocp-Apim-Subscription-Key": {"sub-TOPSECRET"},
		"Cookie":                    {"session=TOPSECRET"},
		"Content-Type":              {"application/json"},
		"X-Request-Id":              {"r-1"},
	}
	got := Header(h)
	for name, vals := range got {
		for _, v := range vals {
			if strings.Contains(v, "TOPSECRET") {
				t.Errorf("%s still holds the secret: %q", name, v)
			}
		}
	}
	if got.Get("Authorization") != "Bearer REDACTED" {
		t.Errorf("Authorization = %q, want the scheme kept: Bearer REDACTED", got.Get("Authorization"))
	}
	for _, keep := range []string{"Content-Type", "X-Request-Id"} {
		if got.Get(keep) != h.Get(keep) {
			t.Errorf("%s = %q, want it unchanged (%q)", keep, got.Get(keep), h.Get(keep))
		}
	}
	if h.Get("X-Api-Key") != "xk-TOPSECRET" {
		t.Error("Header changed the header it was given")
	}
}

func TestAllowedIsShortAndHarmless(t *testing.T) {
	for _, name := range AllowedParams() {
		if SensitiveName(name) {
			t.Errorf("%q is allowed but its name says it holds a credential", name)
		}
	}
	for name, want := range map[string]bool{"api-version": true, "API-Version": true, "model": true,
		"code": false, "pass": false, "sig": false, "version": false, "": false} {
		if got := Allowed(name); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSensitiveName(t *testing.T) {
	for name, want := range map[string]bool{
		"key": true, "api_key": true, "apikey": true, "api-key": true, "token": true, "access_token": true,
		"sig": true, "signature": true, "password": true, "secret": true, "X-Api-Key": true, "Api-Key": true,
		"model": false, "stream": false, "q": false, "keyword": false, "version": false, "signal": false,
	} {
		if got := SensitiveName(name); got != want {
			t.Errorf("SensitiveName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSecretsMasksKeyValues(t *testing.T) {
	got := Secrets("invalid key sk-abcdef1234 (sk-abcdef1234)", "sk-abcdef1234", "", "ab")
	if got != "invalid key REDACTED (REDACTED)" {
		t.Errorf("got %q", got)
	}
}

func FuzzURLNeverKeepsUserinfo(f *testing.F) {
	f.Add("http://user:pw@host/v1?key=x")
	f.Add("https://h/?a=1&token=2#sig=3")
	f.Add("http://h/v1?api-version=1&code=SECRET")
	f.Fuzz(func(t *testing.T, s string) {
		out := URL(s)
		if q := strings.IndexAny(out, "?#"); q >= 0 {
			for _, p := range strings.FieldsFunc(out[q+1:], func(r rune) bool { return strings.ContainsRune("#&;", r) }) {
				name, val, ok := strings.Cut(p, "=")
				if ok && val != Mask && !Allowed(name) || !ok && p != Mask && !Allowed(p) {
					t.Fatalf("a value not on the allow-list was kept: %q -> %q (%q)", s, out, p)
				}
			}
		}
		if URL(out) != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, URL(out))
		}
		start := 0
		if i := strings.Index(out, "://"); i >= 0 {
			start = i + 3
		}
		end := strings.IndexAny(out[start:], "/?#")
		if end < 0 {
			end = len(out) - start
		}
		if at := strings.LastIndexByte(out[start:start+end], '@'); at >= 0 && out[start:start+at] != Mask {
			t.Fatalf("userinfo kept: %q -> %q", s, out)
		}
	})
}
