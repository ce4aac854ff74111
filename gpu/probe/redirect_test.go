package probe

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A probe's GET redirected to another host (another port of the same one
// included, where net/http would keep the Authorization header) is not
// followed: the other server gets neither the key nor the URL's query. One
// within the server's own origin still is.
func TestAProbeFollowsNoRedirectToAnotherHost(t *testing.T) {
	var reached atomic.Int32
	var sawKey atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		sawKey.Store(r.Header.Get("Authorization") != "" || r.URL.RawQuery != "")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"stolen"}]}`))
	}))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/models?"+r.URL.RawQuery, http.StatusFound)
	})
	mux.HandleFunc("GET /here/v1/models", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/real?"+r.URL.RawQuery, http.StatusFound)
	})
	mux.HandleFunc("GET /v1/real", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"m1"}]}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	r := Probe(t.Context(), srv.Client(), Server{Name: "s", URL: srv.URL + "/v1?key=QK-planted", Kind: "openai", APIKey: "sk-planted"})
	if reached.Load() != 0 || sawKey.Load() {
		t.Errorf("the other host was reached %d times (key or query %v)", reached.Load(), sawKey.Load())
	}
	if len(r.Models) != 0 {
		t.Errorf("models %v read from the other host", r.Models)
	}
	r = Probe(t.Context(), srv.Client(), Server{Name: "s", URL: srv.URL + "/here/v1", Kind: "openai"})
	if !r.Reachable || len(r.Models) != 1 || r.Models[0] != "m1" {
		t.Errorf("a redirect within the server: reachable %v, models %v, error %q; want m1", r.Reachable, r.Models, r.Error)
	}
}
