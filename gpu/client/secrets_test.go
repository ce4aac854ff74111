package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"pitwall/internal/oaitest"
)

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
			fmt.Fprintf(w, `<html><a href="http://bob:%s@x/?key=%s">%s</a></html>`, oaitest.PlantedPassword, oaitest.PlantedQueryKey, oaitest.PlantedAPIKey)
		}},
		{"a stream cut after the key was echoed", func(w http.ResponseWriter, r *http.Request) {
			oaitest.Stream(w, false, oaitest.Content("m", "hi"))
			panic(http.ErrAbortHandler)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := oaitest.ClosedURL(t)
			if tt.handler != nil {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					oaitest.Decode(r)
					tt.handler(w, r)
				}))
				t.Cleanup(srv.Close)
				base = srv.URL + "/v1"
			}
			cfg := Config{Name: "s", URL: oaitest.SecretURL(t, base), APIKey: oaitest.PlantedAPIKey}
			c := New(cfg, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, chatErr := c.Chat(ctx, hiRequest("m"))
			_, modelsErr := c.Models(ctx)
			for _, err := range []error{chatErr, modelsErr} {
				if err == nil {
					continue
				}
				if l := oaitest.Leaks(oaitest.ErrorTexts(err)...); len(l) > 0 {
					t.Errorf("the error oaitest.Leaks: %v", l)
				}
			}
			if chatErr == nil {
				t.Fatal("the call succeeded: nothing was tested")
			}
		})
	}
}
