package gpu

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// callInfo carries what one request needs from the hook transport and what the
// hook saw of the response, through the request's context. go-openai hides
// both: it drops temperature 0 and keeps no response headers on its errors.
type callInfo struct {
	temperature *float64
	// Written by RoundTrip, which runs on the goroutine that called
	// http.Client.Do, so the caller reads them after Do without a lock.
	status     int
	retryAfter string
	done       bool // the stream carried "data: [DONE]" (go-openai does not say)
}

type callKey struct{}

func withCall(ctx context.Context, c *callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// hookTransport is the http.RoundTripper under every Client: it puts the
// requested temperature on the wire and notes the response status and
// Retry-After header for classification.
type hookTransport struct {
	base http.RoundTripper
}

func (t *hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*callInfo)
	if c != nil && c.temperature != nil && req.Method == http.MethodPost &&
		strings.HasSuffix(req.URL.Path, "/chat/completions") && req.Body != nil {
		r, err := withTemperature(req, *c.temperature)
		if err != nil {
			return nil, err
		}
		req = r
	}
	resp, err := t.base.RoundTrip(req)
	if c != nil && resp != nil {
		c.status = resp.StatusCode
		c.retryAfter = resp.Header.Get("Retry-After")
		if resp.StatusCode == http.StatusOK && resp.Body != nil {
			resp.Body = &doneWatcher{ReadCloser: resp.Body, c: c}
		}
	}
	return resp, err
}

// CloseIdleConnections passes through to the wrapped transport, so that
// http.Client.CloseIdleConnections reaches it.
func (t *hookTransport) CloseIdleConnections() {
	if ci, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// doneMark is what ends an SSE stream.
var doneMark = []byte("[DONE]")

// doneWatcher notes whether the body carried [DONE], so that a stream that
// ends without a finish_reason can still be told apart from a cut one. (A
// reply whose text holds "[DONE]" and that is then cut before any
// finish_reason would pass for whole; that is rare enough to accept.)
// Reads run on the goroutine that reads the stream, like the caller's.
type doneWatcher struct {
	io.ReadCloser
	c    *callInfo
	tail [len("[DONE]") - 1]byte // last bytes of the previous read
	n    int                     // how many of tail are set
}

func (w *doneWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 && !w.c.done {
		got := p[:n]
		// The mark may straddle two reads: look at the seam too.
		var seam [2 * (len("[DONE]") - 1)]byte
		k := copy(seam[:], w.tail[:w.n])
		k += copy(seam[k:], got)
		if bytes.Contains(seam[:k], doneMark) || bytes.Contains(got, doneMark) {
			w.c.done = true
		}
		if len(got) >= len(w.tail) {
			w.n = copy(w.tail[:], got[len(got)-len(w.tail):])
		} else {
			keep := min(w.n, len(w.tail)-len(got))
			copy(w.tail[:], w.tail[w.n-keep:w.n])
			w.n = keep + copy(w.tail[keep:], got)
		}
	}
	return n, err
}

// withTemperature returns a copy of req whose JSON body also carries
// "temperature". go-openai never writes the key itself (toOpenAI leaves its
// field zero, and omitempty drops zero), so inserting it after the opening
// brace cannot duplicate it, and a tool parameter that happens to be called
// "temperature" is left alone.
func withTemperature(req *http.Request, temp float64) (*http.Request, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	i := bytes.IndexByte(body, '{')
	if i < 0 {
		return nil, fmt.Errorf("request body is not a JSON object")
	}
	field := `"temperature":` + strconv.FormatFloat(temp, 'g', -1, 64)
	out := make([]byte, 0, len(body)+len(field)+1)
	out = append(out, body[:i+1]...)
	out = append(out, field...)
	if rest := bytes.TrimLeft(body[i+1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, body[i+1:]...)

	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.ContentLength = int64(len(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	return r, nil
}
