package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// maxErrMessage caps how much of a server's error text a chat.Error keeps.
const maxErrMessage = 512

// classify turns whatever go-openai, net/http or the stream reader returned
// into a *chat.Error. ctx is the context the call ran under: when it is done,
// its end decides the class whatever the transport said about it. c is what
// the hook transport saw of the response (nil when unknown).
func classify(ctx context.Context, err error, c *callInfo, now time.Time) *chat.Error {
	var ge *chat.Error
	if errors.As(err, &ge) {
		return ge
	}
	e := &chat.Error{Err: err}
	if ctx.Err() != nil {
		e.Class, e.Message = ctxClass(ctx)
		return e
	}

	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
		tooBig *tooLargeError
		notSSE *notStreamError
	)
	switch {
	case errors.As(err, &tooBig):
		e.Class, e.Message = chat.ClassTooLarge, tooBig.Error()
	case errors.As(err, &notSSE):
		// A page where an answer should be: no retry will change it.
		e.Class, e.Status, e.Message = chat.ClassHTTP4xx, notSSE.status, notSSE.Error()
	// RequestError first: it may wrap a half-decoded APIError that lacks the status.
	case errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0:
		e.Status = reqErr.HTTPStatusCode
		e.Class = statusClass(e.Status)
		e.Message = errorBodyMessage(reqErr.Body)
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
	case errors.As(err, &apiErr):
		e.Status = apiErr.HTTPStatusCode
		e.Message = apiErr.Message
		if e.Message == "" {
			e.Message = apiErr.Type
		}
		if e.Status == 0 {
			// An error event inside a 200 stream: its code, when numeric,
			// is the status the server would have sent.
			if code, ok := apiErr.Code.(int); ok && code >= 400 && code < 600 {
				e.Status = code
			}
		}
		e.Class = statusClass(e.Status)
		if e.Status == 0 {
			e.Class = chat.ClassHTTP5xx
			if apiErr.Type == "unavailable_error" {
				e.Class = chat.ClassUnavailable
			}
		}
	default:
		// A 2xx status means the server had answered: the failure is in its body.
		answered := c != nil && c.status >= 200 && c.status < 300
		e.Class, e.Message = transportClass(err, answered)
	}
	if e.Status >= 300 && e.Status < 400 {
		// No stream where one was asked for (a 300, a 304, a redirect with
		// no Location): the URL names something else than the API.
		e.Message += " (a reply the client could not follow: check the server's url, which should end where the API's /v1 is)"
	}
	if c != nil {
		e.RateLimit = c.rate
	}
	if c != nil && e.Class == chat.ClassRateLimit {
		e.RetryAfter = retryAfterMS(c.retryMS)
		if e.RetryAfter == 0 {
			e.RetryAfter = parseRetryAfter(c.retryAfter, now)
		}
	}
	return e
}

// ctxClass classes a call whose context is done: a deadline is a timeout,
// anything else (the caller's stop, the fleet closing) is a cancellation.
func ctxClass(ctx context.Context) (chat.ErrorClass, string) {
	cause := context.Cause(ctx)
	var limit *timeLimitError
	if errors.As(cause, &limit) {
		return chat.ClassTimeout, limit.msg
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return chat.ClassTimeout, fmt.Sprintf("no complete answer before the deadline (%v)", cause)
	}
	return chat.ClassCanceled, fmt.Sprintf("cancelled (%v)", cause)
}

// statusClass classes a non-2xx HTTP status.
func statusClass(status int) chat.ErrorClass {
	switch {
	case status == http.StatusTooManyRequests:
		return chat.ClassRateLimit
	case status == http.StatusServiceUnavailable:
		// Also llama.cpp's "Loading model" and Ollama's full queue: the
		// server is there but cannot take the request now.
		return chat.ClassUnavailable
	case status >= 500:
		return chat.ClassHTTP5xx
	default:
		return chat.ClassHTTP4xx
	}
}

// transportClass classes an error that came with no HTTP error status.
func transportClass(err error, answered bool) (chat.ErrorClass, string) {
	msg := err.Error()
	var netErr net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT),
		errors.As(err, &netErr) && netErr.Timeout():
		return chat.ClassTimeout, msg
	case errors.Is(err, syscall.ECONNREFUSED):
		return chat.ClassUnavailable, "connection refused: " + msg
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return chat.ClassUnavailable, "connection reset: " + msg
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return chat.ClassMalformed, "invalid JSON from the server: " + msg
	case errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		return chat.ClassMalformed, "stream carried no data lines: " + msg
	case isClientRefusal(err):
		return chat.ClassHTTP4xx, "request refused before sending: " + msg
	case answered && errors.Is(err, io.ErrUnexpectedEOF):
		// The body broke off (a chunked body that never ended, a body
		// shorter than its length) after the server had answered: a cut
		// stream.
		return chat.ClassCut, "response cut off: " + msg
	case answered:
		return chat.ClassMalformed, "response cut off: " + msg
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return chat.ClassUnavailable, "connection closed before any response: " + msg
	}
	// Any other failure to get a response (DNS, no route, TLS) means the
	// server cannot be reached.
	return chat.ClassUnavailable, msg
}

// isClientRefusal reports errors go-openai raises before sending anything,
// about the request itself: retrying cannot help.
func isClientRefusal(err error) bool {
	for _, target := range []error{
		openai.ErrChatCompletionInvalidModel, openai.ErrContentFieldsMisused,
		openai.ErrReasoningModelMaxTokensDeprecated, openai.ErrReasoningModelLimitationsLogprobs,
		openai.ErrReasoningModelLimitationsOther, openai.ErrReasoningToolsRequireResponses,
		openai.ErrReasoningSamplingUnsupported, openai.ErrReasoningEffortUnsupported,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var me *json.MarshalerError
	var ue *json.UnsupportedValueError
	var ut *json.UnsupportedTypeError
	return errors.As(err, &me) || errors.As(err, &ue) || errors.As(err, &ut)
}

// errorBodyMessage reads the message out of an error body go-openai could
// not decode: OpenAI's {"error":{"message":...}} (with code a string or a
// number), Ollama's {"error":"..."}, vLLM's older top-level
// {"object":"error","message":...}, FastAPI's {"detail":...}, or plain text.
func errorBodyMessage(body []byte) string {
	body = []byte(strings.TrimSpace(string(body)))
	if len(body) == 0 {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil {
		if raw, ok := obj["error"]; ok {
			if m := errObjectMessage(raw); m != "" {
				return clipMessage(m)
			}
		}
		for _, k := range []string{"message", "detail"} {
			if m := errText(obj[k]); m != "" {
				return clipMessage(m)
			}
		}
	}
	return clipMessage(strings.Join(strings.Fields(string(body)), " "))
}

// errObjectMessage reads an "error" value: a string, or an object with a
// message (a string or a list of strings) and perhaps a type.
func errObjectMessage(raw json.RawMessage) string {
	if s := errText(raw); s != "" {
		return s
	}
	var inner struct {
		Message json.RawMessage `json:"message"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(raw, &inner) != nil {
		return ""
	}
	if m := errText(inner.Message); m != "" {
		return m
	}
	return inner.Type
}

// errText reads a JSON string or a list of strings.
func errText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ", ")
	}
	return ""
}

func clipMessage(s string) string {
	if len(s) <= maxErrMessage {
		return s
	}
	cut := maxErrMessage
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP-date.
// Anything unreadable, or a date already past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs > 1e9 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
