package gpu

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// A Client's plumbing, for an edge that speaks more of a provider's API
// than chat (edges/batchapi: files and batches). Its requests go through the
// same go-openai client and hook transport as Chat's, so its replies are
// capped, and its errors classified and scrubbed, the same way. Nothing in
// the core calls these.

// OpenAI returns the go-openai client under c: the server's base URL and
// key, and the hook transport. A request sent through it gets the reply
// caps and classification of a Call when its context is a Call's.
func (c *Client) OpenAI() *openai.Client { return c.api }

// MaxReplyBytes is the most bytes of one reply c reads (max_reply_bytes).
func (c *Client) MaxReplyBytes() int64 { return c.cfg.MaxReplyBytes }

// Call is one request an edge sends through OpenAI(): Context carries what
// the hook transport needs (the reply cap) and notes what it saw of the
// reply (status, Retry-After), which Fail reads.
type Call struct {
	c    *Client
	ctx  context.Context
	info *callInfo
}

// Call starts a request under ctx whose 2xx reply may be up to maxReply
// bytes long (0: MaxReplyBytes; a downloaded file may be larger than any
// chat reply).
func (c *Client) Call(ctx context.Context, maxReply int64) Call {
	if maxReply <= 0 {
		maxReply = c.cfg.MaxReplyBytes
	}
	info := &callInfo{maxReply: maxReply}
	return Call{c: c, ctx: withCall(ctx, info), info: info}
}

// Context is the context to send the request under.
func (k Call) Context() context.Context { return k.ctx }

// Fail classifies err, what the request (or reading its reply) returned, as
// Chat's errors are: a *chat.Error with a class, the server's name and
// every credential masked.
func (k Call) Fail(err error) *chat.Error {
	return k.c.fail(k.ctx, chat.Request{}, err, k.info)
}

// Scrub masks URL credentials and c's API key in s, as in every error of
// c's: for text a server wrote that reaches a screen or the ledger.
func (c *Client) Scrub(s string) string { return c.scrub(s) }

// StatusError is the error a non-2xx reply says (status, and its body in
// any of the shapes Chat reads) when it arrives other than as the reply to
// a request (a line of a batch's output file): classed by status, its
// message clipped and scrubbed.
func (c *Client) StatusError(status int, body []byte) *chat.Error {
	msg := errorBodyMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &chat.Error{Class: statusClass(status), Status: status, Server: c.cfg.Name, Message: c.scrub(msg)}
}

// ReportedError is an error of the given class a server reported in words
// alone (a batch's error line: a code and a message), clipped and scrubbed
// as a reply's would be.
func (c *Client) ReportedError(class chat.ErrorClass, msg string) *chat.Error {
	return &chat.Error{Class: class, Server: c.cfg.Name, Message: c.scrub(clipMessage(msg))}
}

// ChatBody is the JSON body of req as one chat completion that is not
// streamed: what Chat sends, less the streaming, with the temperature
// written out. go-openai drops a temperature of 0 and the hook transport
// puts it back on requests it sends, but a body inside a file (a batch's
// input) goes past it.
func ChatBody(req chat.Request) (json.RawMessage, error) {
	o, err := toOpenAI(req)
	if err != nil {
		return nil, err
	}
	o.Stream, o.StreamOptions = false, nil
	b, err := json.Marshal(o)
	if err != nil || req.Temperature == nil {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["temperature"] = json.RawMessage(strconv.FormatFloat(*req.Temperature, 'g', -1, 64))
	return json.Marshal(m)
}
