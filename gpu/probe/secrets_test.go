package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"pitwall/internal/oaitest"
)

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
			base := oaitest.ClosedURL(t)
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				t.Cleanup(srv.Close)
				base = srv.URL + "/v1"
			}
			cfg := Server{Name: "s", URL: oaitest.SecretURL(t, base), APIKey: oaitest.PlantedAPIKey}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r := Probe(ctx, nil, cfg)
			if r.Error == "" {
				t.Fatal("the probe found no error: nothing was tested")
			}
			if l := oaitest.Leaks(r.Error, r.URL, fmt.Sprintf("%+v", r)); len(l) > 0 {
				t.Errorf("the probe result oaitest.Leaks: %v", l)
			}
			if !strings.Contains(r.URL, "REDACTED@") || !strings.Contains(r.URL, "?api-version=2024-10-21&") {
				t.Errorf("URL = %q, want it shown with its credentials masked and its api-version kept", r.URL)
			}
		})
	}
}
