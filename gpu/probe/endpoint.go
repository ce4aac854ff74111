package probe

import (
	"net/url"
	"strings"
)

// Endpoint is a server's base URL split once into the part paths are joined
// to and the query every request to it carries. Gateways and hosted APIs put
// what they need in the base URL's query (Azure OpenAI's
// ?api-version=2024-10-21, Azure Functions' ?code=): joined as text, the path
// would land inside the query (/v1?api-version=…/chat/completions). Every
// URL pitwall requests from a server is built here: chat completions, the
// model list, the backends' own endpoints, files and batches.
type Endpoint struct {
	base  string // scheme, host and path, without a trailing '/'
	query string // the base URL's raw query; "" when it has none
}

// ParseEndpoint splits a server's base URL. A fragment is dropped: it is
// never sent, and a path joined after it would be lost with it.
func ParseEndpoint(raw string) Endpoint {
	raw = strings.TrimSpace(raw)
	raw, _, _ = strings.Cut(raw, "#")
	base, query, _ := strings.Cut(raw, "?")
	return Endpoint{base: strings.TrimRight(base, "/"), query: query}
}

// URL is the URL of path (which may carry a query of its own, as a
// listing's ?limit= does) under the endpoint: the base, then the path, then
// the base's query followed by the path's.
func (e Endpoint) URL(path string) string {
	path, pq, _ := strings.Cut(path, "?")
	u := e.base
	if path != "" {
		u += "/" + strings.TrimLeft(path, "/")
	}
	if q := joinQuery(e.query, pq); q != "" {
		u += "?" + q
	}
	return u
}

// Root is the endpoint without its trailing /v1: where the backends' own
// endpoints (/api/ps, /slots, /metrics, /props, /sim/gpus) live. The query
// stays: a gateway that wants it for /v1 wants it there too.
func (e Endpoint) Root() Endpoint {
	e.base = strings.TrimRight(strings.TrimSuffix(e.base, "/v1"), "/")
	return e
}

// AddQuery puts the base's query on a request URL that was built from e.base
// alone (go-openai joins its paths to a base URL as text, so it is given
// the base without the query, and the transport adds it here).
func (e Endpoint) AddQuery(u *url.URL) {
	if e.query != "" {
		u.RawQuery = joinQuery(e.query, u.RawQuery)
	}
}

// Base is the base URL without its query and trailing '/': what paths are
// joined to as text.
func (e Endpoint) Base() string { return e.base }

// Query is the base URL's raw query, "" when it has none.
func (e Endpoint) Query() string { return e.query }

func joinQuery(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "&" + b
}

// EndpointURL is the URL of path under a server's base URL, keeping the base
// URL's query: EndpointURL("http://h/v1?api-version=1", "/models") is
// "http://h/v1/models?api-version=1".
func EndpointURL(baseURL, path string) string { return ParseEndpoint(baseURL).URL(path) }

// BackendURL is the URL of one of the backend's own endpoints (/sim/state,
// /api/ps), beside the base URL's /v1, keeping the base URL's query.
func BackendURL(baseURL, path string) string { return ParseEndpoint(baseURL).Root().URL(path) }

// SameOrigin reports whether a and b have one scheme, host and port (a
// port left out is the scheme's).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
