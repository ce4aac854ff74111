package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/probe"
)

// callInfo carries what one request needs from the hook transport and what the
// hook saw of the response, through the request's context (go-openai keeps
// no response headers on its errors).
type callInfo struct {
	maxReply int64     // the most bytes of a 2xx body read (DefaultMaxReplyBytes when 0)
	watch    *watchdog // nil: no first-byte or stall limit of the client's own
	// Written by RoundTrip and by the body's reads, which run on the
	// goroutine that called the client, so it reads them without a lock.
	status      int
	retryAfter  string
	retryMS     string          // retry-after-ms (OpenAI, Azure)
	rate        *chat.RateLimit // the reply's rate-limit headers
	contentType string
	done        bool  // the stream carried "data: [DONE]" (go-openai does not say)
	received    int64 // bytes of the 2xx body read so far, up to maxReply
	head        []byte
	body        io.Reader // the 2xx body, which Chat reads itself (sseLines)
}

type callKey struct{}

func withCall(ctx context.Context, c *callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// headBytes is how much of a reply body is kept to quote when the reply is
// not what was asked for (an HTML page instead of an event stream).
const headBytes = 256

// maxErrorBody caps what is read of a non-2xx body: the message is clipped
// to maxErrMessage anyway, and an endless error page must not be read whole.
const maxErrorBody = 64 << 10

// hookTransport is the http.RoundTripper under every Client: it notes the
// response status and Retry-After header for classification, caps how much
// of a body is read, tells the watchdog when bytes arrive, and refuses a
// web page sent where an event stream was asked for. It also puts the base URL's query on every
// request to the base URL's own scheme, host and port, which go-openai, joining paths to the
// base as text, cannot; never on one elsewhere, where its ?key= would go too.
type hookTransport struct {
	base   http.RoundTripper
	ep     probe.Endpoint
	origin *url.URL // the base URL's, nil when it does not parse
}

func (t *hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*callInfo)
	if t.ep.Query() != "" && t.origin != nil && probe.SameOrigin(t.origin, req.URL) {
		req = req.Clone(req.Context())
		t.ep.AddQuery(req.URL)
	}
	// The path alone: a base URL's query (?api-version=) must not hide a chat.
	chat := req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/chat/completions")
	resp, err := t.base.RoundTrip(req)
	if c == nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	c.status = resp.StatusCode
	c.retryAfter = resp.Header.Get("Retry-After")
	c.retryMS = resp.Header.Get("retry-after-ms")
	c.rate = rateLimitOf(resp.Header, time.Now())
	c.contentType = resp.Header.Get("Content-Type")
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	body := &replyBody{ReadCloser: resp.Body, c: c, ok: ok, limit: maxErrorBody}
	if ok {
		body.limit = c.maxReply
		if body.limit <= 0 {
			body.limit = DefaultMaxReplyBytes
		}
	}
	resp.Body = body
	if ok {
		c.body = body // whatever the URL looks like (a ?key= after /v1)
	}
	if ok && chat && isWebPage(c.contentType) {
		// An HTML page (a login portal, a proxy's error page) is no answer,
		// however long it is: quote its start and read no further.
		_, _ = io.CopyN(io.Discard, body, headBytes)
		_ = resp.Body.Close()
		return nil, &notStreamError{status: resp.StatusCode, contentType: c.contentType, head: c.head}
	}
	return resp, err
}

// checkRedirect is every Client's CheckRedirect. A request with a body (a
// chat, a Batch API upload) is not redirected at all: net/http would send
// the prompt again to wherever the server points (307, 308) or turn it into
// a GET that asks for something else (301, 302, 303). A GET is redirected
// within the scheme, host and port it was sent to, and never elsewhere:
// the base URL's query (an Azure-style ?key=) belongs to its host, and
// net/http keeps even Authorization for another port of the same host.
// Either refusal is the redirect's status, classed 4xx: no retry changes
// it, the server's url in the config does.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	to := (&url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host}).String() // no path or query: they may hold credentials
	switch {
	case first.Method != http.MethodGet && first.Method != http.MethodHead:
		return &chat.Error{Class: chat.ClassHTTP4xx, Status: status,
			Message: fmt.Sprintf("the server redirected the %s to %s, and pitwall does not follow redirects of requests with a body (the request would go there again): set the server's url to where its API is", first.Method, to)}
	case !probe.SameOrigin(first.URL, req.URL):
		return &chat.Error{Class: chat.ClassHTTP4xx, Status: status,
			Message: fmt.Sprintf("the server redirected to another host, %s, and pitwall follows redirects only within the server's own scheme, host and port (the base URL's query would go there too): set the server's url to where its API is", to)}
	case len(via) >= 10:
		return errors.New("stopped after 10 redirects") // net/http's own limit
	}
	return nil
}

// isWebPage reports a media type that no OpenAI-compatible server sends for
// a chat completion.
func isWebPage(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
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

// replyBody is every response body a Client reads. It stops a 2xx body
// with *tooLargeError past the cap (go-openai would otherwise buffer an
// endless line, or endless non-data lines, whole) and ends an error body
// quietly at maxErrorBody; it keeps the body's first bytes, tells the
// watchdog that bytes arrived, and notes whether the body carried [DONE],
// so that a stream that ends without a finish_reason can still be told
// apart from a cut one. (A reply whose text holds "[DONE]" and that is then
// cut before any finish_reason would pass for whole; that is rare enough to
// accept.) Reads run on the goroutine that reads the stream, like the
// caller's.
type replyBody struct {
	io.ReadCloser
	c     *callInfo
	ok    bool                    // a 2xx body: past the limit is an error, not an end
	limit int64                   // bytes allowed
	n     int64                   // bytes passed on so far
	over  bool                    // the limit was passed
	tail  [len("[DONE]") - 1]byte // last bytes of the previous read
	tailN int                     // how many of tail are set
}

func (b *replyBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.overErr()
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		if w := b.c.watch; w != nil {
			w.touch()
		}
		if b.n+int64(n) > b.limit {
			n = int(b.limit - b.n) // what lies past the cap is dropped
			b.over = true
			err = b.overErr()
		}
		b.note(p[:n])
		b.n += int64(n)
	}
	return n, err
}

func (b *replyBody) overErr() error {
	if !b.ok {
		return io.EOF
	}
	return &tooLargeError{limit: b.limit}
}

// note keeps the first bytes of a 2xx body and looks for [DONE] in it.
func (b *replyBody) note(got []byte) {
	c := b.c
	if !b.ok || len(got) == 0 {
		return
	}
	c.received = b.n + int64(len(got))
	if len(c.head) < headBytes {
		c.head = append(c.head, got[:min(len(got), headBytes-len(c.head))]...)
	}
	if c.done {
		return
	}
	// The mark may straddle two reads: look at the seam too.
	var seam [2 * (len("[DONE]") - 1)]byte
	k := copy(seam[:], b.tail[:b.tailN])
	k += copy(seam[k:], got)
	if bytes.Contains(seam[:k], doneMark) || bytes.Contains(got, doneMark) {
		c.done = true
	}
	if len(got) >= len(b.tail) {
		b.tailN = copy(b.tail[:], got[len(got)-len(b.tail):])
	} else {
		keep := min(b.tailN, len(b.tail)-len(got))
		copy(b.tail[:], b.tail[b.tailN-keep:b.tailN])
		b.tailN = keep + copy(b.tail[keep:], got)
	}
}
