package batchapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
)

// newClient is the Batch API client of a client.Client for cfg.
func newClient(cfg gpu.ServerConfig, hc *http.Client) *Client { return New(client.New(cfg.Config, hc)) }

// Distinctive secrets, planted where a user might write them; none may
// come back in anything a caller can print or store.
const (
	plantedPassword = "PW-planted-7f3a"
	plantedQueryKey = "QK-planted-91bc"
	plantedAPIKey   = "sk-planted-API-key-4d2e"
)

var planted = []string{plantedPassword, plantedQueryKey, plantedAPIKey}

// secretURL is base with a password and a ?key= written into it.
func secretURL(t *testing.T, base string) string {
	t.Helper()
	return strings.Replace(base, "http://", "http://alice:"+plantedPassword+"@", 1) + "?key=" + plantedQueryKey
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

// deadURL is the base URL of a port nothing listens on.
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
