package gpu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
)

// Distinctive secrets, planted where a user might write them; none may
// come back in anything a caller can print or store.
const (
	plantedPassword = "PW-planted-7f3a"
	plantedQueryKey = "QK-planted-91bc"
	plantedAPIKey   = "sk-planted-API-key-4d2e"
	plantedCode     = "CODE-planted-azfn-22d1" // Azure Functions' ?code=
	plantedPass     = "PASS-planted-gw-6e0f"   // a gateway's ?pass=
)

var planted = []string{plantedPassword, plantedQueryKey, plantedAPIKey, plantedCode, plantedPass}

// secretURL is base with a password and keys in its query written into it,
// beside the api-version that may be shown.
func secretURL(t *testing.T, base string) string {
	t.Helper()
	return strings.Replace(base, "http://", "http://alice:"+plantedPassword+"@", 1) +
		"?api-version=2024-10-21&key=" + plantedQueryKey + "&code=" + plantedCode + "&pass=" + plantedPass
}

// leaks lists the planted secrets found in any of texts.
func leaks(texts ...string) []string {
	var found []string
	for _, s := range planted {
		for _, text := range texts {
			if strings.Contains(text, s) {
				found = append(found, fmt.Sprintf("%q in %q", s, text))
			}
		}
	}
	return found
}

// errorTexts is every text a caller can get out of err: its message, the
// classified error's fields and each error it wraps, down to the last.
func errorTexts(err error) []string {
	var out []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, e.Error(), fmt.Sprintf("%+v", e))
	}
	var ce *chat.Error
	if errors.As(err, &ce) {
		out = append(out, ce.Message, chat.MessageOf(err))
	}
	return out
}

func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/v1"
}

func TestClientErrorsCarryNoCredentials(t *testing.T) {
	echo := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			// A careless server quotes back what it was sent.
			fmt.Fprintf(w, body, r.Header.Get("Authorization"), r.URL.String())
		}
	}
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
	}{
		{"connection refused", nil},
		{"a 401 that echoes the key and URL", echo(401, `{"error":{"message":"bad key %s for %s"}}`)},
		{"a 500 in plain text that echoes them", echo(500, "oops: %s %s")},
		{"an HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><a href="http://bob:%s@x/?key=%s">%s</a></html>`, plantedPassword, plantedQueryKey, plantedAPIKey)
		}},
		{"a stream cut after the key was echoed", func(w http.ResponseWriter, r *http.Request) {
			oaiStream(w, false, oaiContent("m", "hi"))
			panic(http.ErrAbortHandler)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := deadURL(t)
			if tt.handler != nil {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					oaiDecode(r)
					tt.handler(w, r)
				}))
				t.Cleanup(srv.Close)
				base = srv.URL + "/v1"
			}
			cfg := ServerConfig{Config: client.Config{Name: "s", URL: secretURL(t, base), APIKey: plantedAPIKey}}
			c := client.New(cfg.Config, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, chatErr := c.Chat(ctx, hiRequest("m"))
			_, modelsErr := c.Models(ctx)
			for _, err := range []error{chatErr, modelsErr} {
				if err == nil {
					continue
				}
				if l := leaks(errorTexts(err)...); len(l) > 0 {
					t.Errorf("the error leaks: %v", l)
				}
			}
			if chatErr == nil {
				t.Fatal("the call succeeded: nothing was tested")
			}
		})
	}
}

func TestProbeResultsCarryNoCredentials(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
	}{
		{"connection refused", nil},
		{"a 403", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }},
		{"not the JSON expected", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "<html>%s</html>", r.URL.String())
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := deadURL(t)
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				t.Cleanup(srv.Close)
				base = srv.URL + "/v1"
			}
			cfg := ServerConfig{Config: client.Config{Name: "s", URL: secretURL(t, base), APIKey: plantedAPIKey}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r := Probe(ctx, nil, cfg)
			if r.Error == "" {
				t.Fatal("the probe found no error: nothing was tested")
			}
			if l := leaks(r.Error, r.URL, fmt.Sprintf("%+v", r)); len(l) > 0 {
				t.Errorf("the probe result leaks: %v", l)
			}
			if !strings.Contains(r.URL, "REDACTED@") || !strings.Contains(r.URL, "?api-version=2024-10-21&") {
				t.Errorf("URL = %q, want it shown with its credentials masked and its api-version kept", r.URL)
			}
		})
	}
}
