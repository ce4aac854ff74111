package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"syscall"

	"pitwall/internal/redact"
)

// probeBodyLimit bounds what a probe reads from one endpoint; /metrics of a
// busy vLLM with histograms is the largest at a few hundred KiB.
const probeBodyLimit = 8 << 20

// Getter makes a probe's GET requests: with the server's API key, a bounded
// body, and errors that tell an answer from no answer (Unreachable).
type Getter struct {
	hc  *http.Client
	key string
}

// NewGetter returns a Getter on hc (nil for http.DefaultClient) with key.
func NewGetter(hc *http.Client, key string) Getter {
	if hc == nil {
		hc = http.DefaultClient
	}
	own := *hc
	own.CheckRedirect = sameOriginOnly
	return Getter{hc: &own, key: key}
}

// sameOriginOnly follows a probe's redirect only within the server's own
// scheme, host and port: elsewhere its key (net/http keeps Authorization
// for another port of the same host) and its URL's query would go along.
func sameOriginOnly(req *http.Request, via []*http.Request) error {
	if !SameOrigin(via[0].URL, req.URL) {
		return fmt.Errorf("redirected to another host, %s://%s, which a probe does not follow", req.URL.Scheme, req.URL.Host)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// probeStatusError is a response that arrived with a non-2xx status.
type probeStatusError struct {
	URL    string
	Status int
}

func (e *probeStatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d", redact.URL(e.URL), e.Status)
}

// Get fetches url and returns its body; a non-2xx status is a
// *probeStatusError.
func (c Getter) Get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact.URL(url), err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
	if err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return body, &probeStatusError{URL: url, Status: resp.StatusCode}
	}
	return body, nil
}

// GetJSON fetches url and decodes its JSON body into v.
func (c Getter) GetJSON(ctx context.Context, url string, v any) error {
	body, err := c.Get(ctx, url)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &probeShapeError{URL: url, Err: err}
	}
	return nil
}

// probeShapeError is an answer that was not the JSON expected: the server is
// there, just not saying what a probe hoped.
type probeShapeError struct {
	URL string
	Err error
}

func (e *probeShapeError) Error() string {
	return redact.Text(fmt.Sprintf("GET %s: not the JSON expected: %v", e.URL, e.Err))
}

func (e *probeShapeError) Unwrap() error { return e.Err }

// getMetrics fetches and parses a Prometheus /metrics page.
func (c Getter) getMetrics(ctx context.Context, url string) (map[string][]PromSample, error) {
	body, err := c.Get(ctx, url)
	if err != nil {
		return nil, err
	}
	m, err := ParsePrometheus(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact.URL(url), err)
	}
	return m, nil
}

// Ping asks GET {baseURL}/models and reports nil when the server answered
// at all (any status will do), or an error saying in words, with the
// credentials masked, why nothing answered.
func Ping(ctx context.Context, hc *http.Client, baseURL, apiKey string) error {
	url := ParseEndpoint(baseURL).URL("/models")
	if _, err := NewGetter(hc, apiKey).Get(ctx, url); Unreachable(err) {
		return errors.New(probeDescribe(url, err))
	}
	return nil
}

// Unreachable reports whether err means the server did not answer at
// all, as opposed to answering with an error or an unexpected body.
func Unreachable(err error) bool {
	var (
		se    *probeStatusError
		shape *probeShapeError
	)
	return err != nil && !errors.As(err, &se) && !errors.As(err, &shape)
}

// probeStatus is the HTTP status behind a probe request's outcome: 200 for
// a success (or an answer of the wrong shape), the status of an error
// answer, 0 when the server did not answer.
func probeStatus(err error) int {
	var se *probeStatusError
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &se):
		return se.Status
	case !Unreachable(err):
		return http.StatusOK
	}
	return 0
}

// probeDescribe says in words why a request got no answer, for a person
// reading the fleet panel, with the credentials in URLs masked.
func probeDescribe(url string, err error) string {
	return redact.Text(describeProbe(redact.URL(url), err))
}

func describeProbe(url string, err error) string {
	var (
		dns   *net.DNSError
		se    *probeStatusError
		shape *probeShapeError
		ne    net.Error
	)
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.As(err, &shape):
		return shape.Error()
	case errors.Is(err, context.Canceled):
		return fmt.Sprintf("GET %s: probe cancelled", url)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("GET %s: no answer in time", url)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("GET %s: connection refused: nothing is listening there (is the server running?)", url)
	case errors.As(err, &dns):
		return fmt.Sprintf("GET %s: cannot resolve host %q", url, dns.Name)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("GET %s: the connection was closed before an answer", url)
	}
	// net/http's errors repeat the method and URL; say them once.
	var ue *neturl.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Sprintf("GET %s: %v", url, err)
}
