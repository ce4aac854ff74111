package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"
)

// elsewhere is a second host that records every request it receives, and
// answers a chat or a model list as a server would, so that a client that
// followed a redirect there would succeed.
type elsewhere struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // method, path, query, Authorization and body of each request
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.seen = append(e.seen, strings.Join([]string{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), string(body)}, " | "))
		e.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/models") {
			oaitest.Models(w, "m1")
			return
		}
		oaitest.Reply(w, "m1", "Hello from elsewhere")
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *elsewhere) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.seen)
}

// redirector sends every request to target's host with status, keeping
// the path and the query, as a moved Azure-style endpoint would.
func redirector(t *testing.T, target string, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, target+r.URL.RequestURI(), status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const queryKey = "sk-in-the-query"

// A redirect to another host (another port is another host) carried the
// base URL's ?key= there, and for a 307 or 308 the prompt too: the hook
// transport put the query on every request, the redirected one included,
// and net/http re-sent the body. Now a request with a body is not
// redirected at all, and a GET not to another host; the other host
// receives nothing, and the error says where the server pointed.
func TestARedirectToAnotherHostCarriesNeitherTheQueryNorTheBody(t *testing.T) {
	for _, status := range []int{307, 308, 301, 302, 303} {
		other := newElsewhere(t)
		base := redirector(t, other.URL, status)
		c := New(Config{Name: "s", URL: base.URL + "/v1?api-version=2024-10-21&key=" + queryKey, APIKey: "sk-bearer"}, nil)
		req := hiRequest("m1")
		req.Messages[0].Content = "the prompt, which stays home"

		_, err := c.Chat(context.Background(), req)
		var ce *chat.Error
		if !errors.As(err, &ce) {
			t.Fatalf("%d POST: %v; want a *chat.Error (the other host received %q)", status, err, other.requests())
		}
		host := strings.TrimPrefix(other.URL, "http://")
		if ce.Class != chat.ClassHTTP4xx || ce.Status != status || !strings.Contains(ce.Message, host) ||
			!strings.Contains(ce.Message, "does not follow redirects of requests with a body") {
			t.Errorf("%d POST: %s %d %q; want a 4xx-class error of status %d naming %s and saying why", status, ce.Class, ce.Status, ce.Message, status, host)
		}
		if strings.Contains(err.Error(), queryKey) || strings.Contains(ce.Message, queryKey) {
			t.Errorf("%d POST: the error shows the query's key: %v", status, err)
		}

		_, err = c.Models(context.Background())
		if !errors.As(err, &ce) {
			t.Fatalf("%d GET: %v; want a *chat.Error (the other host received %q)", status, err, other.requests())
		}
		if ce.Class != chat.ClassHTTP4xx || ce.Status != status || !strings.Contains(ce.Message, host) || !strings.Contains(ce.Message, "another host") {
			t.Errorf("%d GET: %s %d %q; want a 4xx-class error of status %d naming %s as another host", status, ce.Class, ce.Status, ce.Message, status, host)
		}
		if got := other.requests(); len(got) > 0 {
			t.Errorf("%d: the other host received %q; want nothing (neither ?key= nor the prompt)", status, got)
		}
		c.CloseIdleConnections()
	}
}

// A redirect of a GET within the server's own scheme, host and port is
// still followed, with the base URL's query: it is the same server.
func TestARedirectOfAGetOnTheSameHostIsFollowed(t *testing.T) {
	var queries []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if r.URL.Path == "/v1/models" {
			http.Redirect(w, r, "/v2/models", http.StatusFound)
			return
		}
		oaitest.Models(w, "m1")
	}))
	defer srv.Close()
	c := New(Config{Name: "s", URL: srv.URL + "/v1?key=" + queryKey}, nil)
	defer c.CloseIdleConnections()
	ids, err := c.Models(context.Background())
	if err != nil || len(ids) != 1 || ids[0] != "m1" {
		t.Fatalf("models %v, %v; want the redirect followed to m1", ids, err)
	}
	want := []string{"/v1/models?key=" + url.QueryEscape(queryKey), "/v2/models?key=" + url.QueryEscape(queryKey)}
	if !slices.Equal(queries, want) {
		t.Errorf("requests %q, want %q", queries, want)
	}
}

// A chat is not redirected even on its own host: its body would be sent
// again to wherever the server says, and a server that moved its API is
// fixed by its url in the config.
func TestARedirectOfAChatOnTheSameHostIsNotFollowed(t *testing.T) {
	var posts int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		mu.Unlock()
		if r.URL.Path == "/v1/chat/completions" {
			http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
			return
		}
		oaitest.Reply(w, "m1", "Hello")
	}))
	defer srv.Close()
	c := New(Config{Name: "s", URL: srv.URL + "/v1"}, nil)
	defer c.CloseIdleConnections()
	_, err := c.Chat(context.Background(), hiRequest("m1"))
	var ce *chat.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusTemporaryRedirect || ce.Class != chat.ClassHTTP4xx ||
		!strings.Contains(ce.Message, "does not follow redirects of requests with a body") {
		t.Fatalf("error %#v; want a 4xx-class error of status 307 saying why", err)
	}
	if posts != 1 {
		t.Errorf("%d requests reached the server; want 1 (the redirect not followed)", posts)
	}
}

// The hook puts the base URL's query on requests to the base URL's own
// origin only: whatever redirects a client follows, ?key= stays home.
func TestTheBaseURLsQueryGoesOnlyToItsOwnHost(t *testing.T) {
	other := newElsewhere(t)
	home := newElsewhere(t)
	c := New(Config{Name: "s", URL: home.URL + "/v1?key=" + queryKey}, nil)
	defer c.CloseIdleConnections()
	for _, target := range []string{home.URL + "/v1/models", other.URL + "/v1/models"} {
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.hc.Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if got := home.requests(); len(got) != 1 || !strings.Contains(got[0], "key="+queryKey) {
		t.Errorf("the base URL's host received %q; want its query", got)
	}
	if got := other.requests(); len(got) != 1 || strings.Contains(got[0], queryKey) {
		t.Errorf("another host received %q; want the request without the query", got)
	}
}
