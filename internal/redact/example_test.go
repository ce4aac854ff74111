package redact_test

import (
	"fmt"
	"net/http"

	"pitwall/internal/redact"
)

// A URL keeps its shape: the userinfo and every query value not on the
// allow-list are masked, whatever the parameter is called.
func ExampleURL() {
	fmt.Println(redact.URL("https://alice:s3cret@gw.example/openai/v1?api-version=2024-10-21&code=abc123"))
	// Output: https://REDACTED@gw.example/openai/v1?api-version=2024-10-21&code=REDACTED
}

// An error that quotes a request's URL or a bearer token can be shown and
// stored once it has gone through Text.
func ExampleText() {
	fmt.Println(redact.Text(`Get "http://bob:pw@10.0.0.5:8000/v1/models": 401, Authorization: Bearer sk-live-1234567890`))
	// Output: Get "http://REDACTED@10.0.0.5:8000/v1/models": 401, Authorization: Bearer REDACTED
}

// A key a server echoes back is masked wherever it appears.
func ExampleSecrets() {
	fmt.Println(redact.Secrets("invalid key sk-abcdef, check sk-abcdef", "sk-abcdef"))
	// Output: invalid key REDACTED, check REDACTED
}

// Credential headers are masked in a copy, their scheme kept; the request's
// own stay as they are.
func ExampleHeader() {
	h := http.Header{"Authorization": {"Bearer sk-abcdef"}, "Content-Type": {"application/json"}}
	masked := redact.Header(h)
	fmt.Println(masked.Get("Authorization"), masked.Get("Content-Type"), h.Get("Authorization"))
	// Output: Bearer REDACTED application/json Bearer sk-abcdef
}
