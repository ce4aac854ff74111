package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/probe"
	"pitwall/internal/redact"

	openai "github.com/sashabaranov/go-openai"
)

// minDecode is the shortest decode time (first token to last) a tokens/s
// figure is computed over: under it the figure measures the server's
// flushing and the network, not decoding.
const minDecode = 50 * time.Millisecond

// Client talks to one OpenAI-compatible server: chat completions in
// go-openai's types, sent as go-openai would (postChat), models and the
// Batch API through go-openai itself. It is safe for concurrent use; it
// keeps no state between calls.
//
// Every error it returns, and every message in one, has the credentials of
// URLs and the server's API key masked (internal/redact): errors end up on
// screens, in logs and in the ledger.
type Client struct {
	cfg     Config
	api     *openai.Client
	hc      *http.Client
	chatURL string   // where chat completions are posted (postChat)
	ctx     contexts // each model's context, to see a prompt the server cut
}

// Config is what a client needs to know of the server it talks to.
type Config struct {
	Name   string
	URL    string    // base URL including /v1
	Kind   chat.Kind // openai | lmstudio | ollama | llamacpp | vllm | sim ("" = detect)
	APIKey string    // resolved from api_key_env; never logged or stored
	// MaxReplyBytes caps one response body as it arrives, SSE framing
	// included: a reply past it ends chat.ClassTooLarge, keeping what came
	// before. 0 means DefaultMaxReplyBytes.
	MaxReplyBytes int64
	// FirstByteTimeout bounds the wait from sending a chat request to the
	// first byte of its reply; 0 leaves it to the call's deadline.
	FirstByteTimeout time.Duration
	// StallTimeout ends a reply whose tokens have begun and that then sends
	// nothing for this long (chat.ClassTimeout). 0 means
	// DefaultStallTimeout; negative, no stall limit.
	StallTimeout time.Duration
}

// New returns a client for cfg. hc may be nil for a client of its own (no
// overall timeout: deadlines come from the context of each call; 32 idle
// connections kept; the fleet shares one sized for its slots). The
// client wraps hc's transport and sets its own CheckRedirect
// (checkRedirect); hc itself is not changed.
func New(cfg Config, hc *http.Client) *Client {
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32
		hc = &http.Client{Transport: t}
	}
	wrapped := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	ep := probe.ParseEndpoint(cfg.URL)
	origin, _ := url.Parse(ep.Base()) // nil when it does not parse: nor do the requests to it
	wrapped.Transport = &hookTransport{base: base, ep: ep, origin: origin}
	wrapped.CheckRedirect = checkRedirect

	oc := openai.DefaultConfig(cfg.APIKey) // Bearer only when the key is not empty
	oc.BaseURL = ep.Base()                 // the transport adds the base URL's query
	oc.HTTPClient = &wrapped
	if cfg.MaxReplyBytes <= 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if cfg.StallTimeout == 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	return &Client{cfg: cfg, api: openai.NewClientWithConfig(oc), hc: &wrapped, chatURL: chatURL(ep.Base()),
		ctx: contexts{get: probe.NewGetter(hc, cfg.APIKey), root: ep.Root(), kind: cfg.Kind}}
}

// emptyLinesLimit is the most lines in a row a stream may send that are
// not data (sseLines): keep-alive comments during a long prefill count,
// and go-openai's default of 300 (its EmptyMessagesLimit) would end a
// healthy stream.
const emptyLinesLimit = 1 << 20

// Server returns the name of the server this client talks to.
func (c *Client) Server() string { return c.cfg.Name }

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Chat runs one streamed chat completion and returns what the server said
// and how fast. Errors are *chat.Error with a class. On error the chat.Result still
// holds whatever arrived before the failure (server, partial content).
func (c *Client) Chat(ctx context.Context, req chat.Request) (chat.Result, error) {
	start := time.Now()
	res := chat.Result{Server: c.cfg.Name}
	if t := req.Temperature; t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0)) {
		return res, c.refuse(req, fmt.Errorf("temperature %v is not a number", *t))
	}
	oreq, err := toOpenAI(req)
	if err != nil {
		return res, c.refuse(req, err)
	}
	ctx, wd := newWatchdog(ctx, c.cfg.FirstByteTimeout, c.cfg.StallTimeout)
	defer wd.stop()
	cl := &callInfo{maxReply: c.cfg.MaxReplyBytes, watch: wd}
	resp, err := c.postChat(ctx, cl, &oreq, req.Temperature)
	if err != nil {
		res.Latency = time.Since(start) // how long the failure took
		return res, c.fail(ctx, req, err, cl)
	}
	defer func() { _ = resp.Body.Close() }()

	// The body (the hook keeps every 2xx body) is read here, line by line
	// without a copy (sseLines).
	lines := newSSELines(cl.body, emptyLinesLimit)
	defer lines.release()
	var acc streamAcc
	for {
		raw, err := lines.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return acc.result(res, start, time.Now()), c.fail(ctx, req, err, cl)
		}
		if err := acc.add(raw, time.Since(start)); err != nil {
			return acc.result(res, start, time.Now()), c.fail(ctx, req, err, cl)
		}
		if wd != nil && acc.deltas > 0 {
			wd.tokens()
		}
	}
	res = acc.result(res, start, time.Now())
	res.RateLimit = cl.rate
	switch {
	case acc.chunks == 0 && cl.received > 0 && !looksLikeSSE(cl.head):
		ns := &notStreamError{status: cl.status, contentType: cl.contentType, head: cl.head}
		return res, c.fail(ctx, req, ns, cl)
	case acc.chunks == 0:
		return res, c.malformed(req, "the server sent no completion chunks (empty response)")
	case acc.finish == "" && !cl.done:
		return res, &chat.Error{Class: chat.ClassCut, Server: c.cfg.Name, Model: req.Model,
			Message: "stream ended without a finish_reason or [DONE] (cut off)"}
	}
	c.markCut(ctx, req.Model, &res)
	return res, nil
}

// Models lists the models the server offers (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	cl := &callInfo{maxReply: c.cfg.MaxReplyBytes}
	list, err := c.api.ListModels(withCall(ctx, cl))
	if err != nil {
		return nil, c.fail(ctx, chat.Request{}, err, cl)
	}
	ids := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

func (c *Client) fail(ctx context.Context, req chat.Request, err error, cl *callInfo) *chat.Error {
	e := classify(ctx, err, cl, time.Now())
	e.Server, e.Model = c.cfg.Name, req.Model
	e.Message = c.scrub(e.Message)
	if e.Err != nil {
		e.Err = &scrubbedError{msg: c.scrub(e.Err.Error()), err: e.Err}
	}
	return e
}

// scrub masks URL credentials in s (net/http's errors quote the request's
// URL) and the client's own key, should a server echo it back.
func (c *Client) scrub(s string) string {
	return redact.Secrets(redact.Text(s), c.cfg.APIKey)
}

// scrubbedError stands for an error whose text has its credentials masked.
// errors.Is still sees what the error beneath it is (context.Canceled,
// io.EOF, an errno), but nothing can unwrap it to print the raw text.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string        { return e.msg }
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.err, target) }

func (c *Client) refuse(req chat.Request, err error) *chat.Error {
	return &chat.Error{Class: chat.ClassHTTP4xx, Server: c.cfg.Name, Model: req.Model,
		Message: "request not sent: " + err.Error(), Err: err}
}

func (c *Client) malformed(req chat.Request, msg string) *chat.Error {
	return &chat.Error{Class: chat.ClassMalformed, Server: c.cfg.Name, Model: req.Model, Message: msg}
}

// streamAcc gathers a streamed reply.
type streamAcc struct {
	content, reasoning strings.Builder
	tools              toolCallAcc
	model, finish      string
	chunks             int // chunks decoded
	deltas             int // chunks that carried content, reasoning or a tool call
	ttft               time.Duration
	last               time.Duration // when the last token-bearing chunk came
	usage              bool
	prompt, completion int
	scratch            streamChunk // the chunk being decoded
}

// add decodes one chunk; at is the time since the call began.
func (a *streamAcc) add(raw []byte, at time.Duration) error {
	ch := &a.scratch
	*ch = streamChunk{} // encoding/json merges into what is there
	if err := json.Unmarshal(raw, ch); err != nil {
		return fmt.Errorf("chunk %d: %w", a.chunks+1, err)
	}
	a.chunks++
	if a.model == "" {
		a.model = ch.Model
	}
	if ch.Usage != nil && (ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0) {
		a.usage = true
		a.prompt, a.completion = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	for i := range ch.Choices {
		choice := &ch.Choices[i]
		if choice.Index != 0 {
			continue // pitwall asks for one choice
		}
		d := &choice.Delta
		reasoning := d.ReasoningContent + d.Reasoning
		if d.Content != "" || reasoning != "" || len(d.ToolCalls) > 0 {
			if a.deltas == 0 {
				a.ttft = at
			}
			a.last = at
			a.deltas++
		}
		a.content.WriteString(d.Content)
		a.reasoning.WriteString(reasoning)
		for _, tc := range d.ToolCalls {
			a.tools.add(tc)
		}
		if choice.FinishReason != "" && !cut(a.finish) {
			a.finish = choice.FinishReason
		}
	}
	return nil
}

// cut reports whether a finish_reason says the reply was cut short: a
// later chunk's "stop" does not make it whole (a judge's answer is read
// only when it ended by itself).
func cut(finish string) bool { return finish == "length" || finish == "content_filter" }

// result fills res from what has arrived so far.
func (a *streamAcc) result(res chat.Result, start, end time.Time) chat.Result {
	res.Model = a.model
	res.Content = a.content.String()
	res.Reasoning = a.reasoning.String()
	res.ToolCalls = a.tools.calls
	res.FinishReason = a.finish
	res.Latency = end.Sub(start)
	res.TTFT = a.ttft
	if a.deltas == 0 {
		res.TTFT = res.Latency // nothing came before the end
	}
	res.PromptTokens, res.CompletionTokens = a.prompt, a.completion
	if !a.usage {
		// The server sent no usage (no include_usage support): one chunk
		// is about one token on llama.cpp, Ollama and vLLM, so the count of
		// token-bearing chunks stands in. The prompt count stays unknown (0).
		res.CompletionTokens = a.deltas
	}
	res.TokensPerSec = 0
	if a.deltas >= 2 {
		res.TokensPerSec = tokensPerSec(res.CompletionTokens, a.last-a.ttft)
	}
	return res
}

// tokensPerSec is the decode rate: the tokens after the first over the time
// from the first token-bearing chunk to the last (decode). 0 says it was not
// measured: a reply in one chunk, or a decode shorter than minDecode. The
// whole call never stands in: divided by the prefill, a short reply would
// read 5 tok/s for a model that decodes 100.
func tokensPerSec(tokens int, decode time.Duration) float64 {
	if tokens <= 1 || decode < minDecode {
		return 0
	}
	return float64(tokens-1) / decode.Seconds()
}
