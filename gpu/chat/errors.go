package chat

import (
	"errors"
	"fmt"
	"time"
)

// ErrorClass says what kind of failure a request met. It is decided once,
// where the error is born, and travels with the error.
type ErrorClass string

const (
	ClassTimeout     ErrorClass = "timeout"
	ClassRateLimit   ErrorClass = "rate_limit"
	ClassUnavailable ErrorClass = "unavailable" // connection refused/reset, 503
	ClassHTTP4xx     ErrorClass = "http_4xx"
	ClassHTTP5xx     ErrorClass = "http_5xx"
	ClassMalformed   ErrorClass = "malformed" // bad JSON, an empty or unreadable answer
	ClassCanceled    ErrorClass = "cancelled" // the caller's context was cancelled (stop)
	ClassTooLarge    ErrorClass = "too_large" // the reply passed the client's size cap
	// ClassCut: the stream ended, or broke off, with no finish reason and
	// no [DONE]: the reply was cut short (Ollama ends a stream so after
	// one token repeated too often). What arrived before it is kept.
	ClassCut ErrorClass = "cut"
	// ClassPromptCut: the server cut the prompt to the model's context
	// (Ollama does so without an error): the reply answers part of the
	// test. Not retried: the same prompt is cut the same way.
	ClassPromptCut ErrorClass = "prompt_cut"
)

// Transient reports whether a retry may succeed.
func (c ErrorClass) Transient() bool {
	switch c {
	case ClassTimeout, ClassRateLimit, ClassUnavailable, ClassHTTP5xx, ClassMalformed, ClassCut:
		return true
	}
	return false
}

// Error is a classified request failure.
type Error struct {
	Class      ErrorClass
	Server     string
	Model      string
	Status     int           // HTTP status, 0 when none
	Message    string        // what the server or transport said
	RetryAfter time.Duration // from a 429's retry-after-ms or Retry-After, 0 when absent
	RateLimit  *RateLimit    // the limits the reply's headers said, nil when none
	Err        error         // the underlying error, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Server, e.Class)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of err, or "" when err is not a classified error.
func ClassOf(err error) ErrorClass {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ""
}

// MessageOf is what err says, without the server and class prefix of
// Error.Error: the message of a classified error, else err's text.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		if e.Message != "" {
			return e.Message
		}
		if e.Err != nil {
			return e.Err.Error()
		}
	}
	return err.Error()
}

// ServerOf is the server a classified error names, or "".
func ServerOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Server
	}
	return ""
}

// Answered reports whether err came with an HTTP answer from the server.
func Answered(err error) bool {
	switch ClassOf(err) {
	case ClassHTTP4xx, ClassHTTP5xx, ClassRateLimit, ClassMalformed, ClassCut:
		return true
	}
	return false
}
