package client

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"pitwall/internal/textutil"
)

// DefaultMaxReplyBytes caps one response body when Config leaves
// MaxReplyBytes zero. A streamed token costs 150 to 300 bytes of SSE on the
// wire, so 8 MiB holds about 30,000 of them: any honest reply to a
// max_tokens of 16k, with room.
const DefaultMaxReplyBytes = 8 << 20

// DefaultStallTimeout ends a reply that has begun streaming tokens and then
// sends nothing for this long, when Config leaves StallTimeout zero.
// Prefill, a model load and a hosted model's hidden reasoning all come
// before the first token, so they are bounded by the first-byte limit and
// the call's deadline, never by this.
const DefaultStallTimeout = 60 * time.Second

// tooLargeError is a 2xx body that passed the client's cap.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the reply passed the %s cap (max_reply_bytes); what arrived before it is kept", textutil.ByteSize(e.limit))
}

// notStreamError is a 2xx answer to a chat completion that was not an
// event stream: a web page, plain text, a JSON document. Asking again gets
// the same page, so it is not transient.
type notStreamError struct {
	status      int
	contentType string
	head        []byte
}

func (e *notStreamError) Error() string {
	ct := e.contentType
	if ct == "" {
		ct = "no Content-Type"
	} else {
		ct = "Content-Type " + strconv.Quote(ct)
	}
	head := strings.Join(strings.Fields(string(e.head)), " ")
	return fmt.Sprintf("the server answered %d with %s, not an event stream of completion chunks; it begins %s",
		e.status, ct, clipMessage(strconv.Quote(head)))
}

// looksLikeSSE reports whether a body starts as an event stream does: with
// a field (data:, event:, id:, retry:) or a comment (:).
func looksLikeSSE(head []byte) bool {
	s := strings.TrimLeft(string(head), " \t\r\n\ufeff")
	for _, p := range []string{"data:", "event:", "id:", "retry:", ":"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// timeLimitError is the cause the watchdog cancels a call with.
type timeLimitError struct{ msg string }

func (e *timeLimitError) Error() string { return e.msg }

// watchdog ends a streamed call that waits too long for its first byte, or
// that stops sending once tokens flow, by cancelling the call's context
// with a *timeLimitError (classified as a timeout). Its methods run on the
// goroutine that makes the call and reads the stream; only the timers'
// functions run elsewhere, and they only cancel.
type watchdog struct {
	stall  time.Duration
	cancel context.CancelCauseFunc
	first  *time.Timer // until the first byte of the body
	timer  *time.Timer // the stall timer, once armed
	bytes  bool        // a byte of the body has arrived
}

// newWatchdog returns ctx under the watchdog, or ctx itself and nil when
// both limits are off (first <= 0 means the call's deadline alone bounds
// the wait for the first byte; stall <= 0 means no stall limit).
func newWatchdog(ctx context.Context, first, stall time.Duration) (context.Context, *watchdog) {
	if first <= 0 && stall <= 0 {
		return ctx, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{stall: stall, cancel: cancel}
	if first > 0 {
		w.first = time.AfterFunc(first, func() {
			cancel(&timeLimitError{fmt.Sprintf("no reply within %v of sending it (the first-byte limit)", first)})
		})
	}
	return ctx, w
}

// touch says that bytes of the body arrived.
func (w *watchdog) touch() {
	if !w.bytes {
		w.bytes = true
		if w.first != nil {
			w.first.Stop()
		}
	}
	if w.timer != nil {
		w.timer.Reset(w.stall)
	}
}

// tokens says that the reply's first token arrived: from now on, a silence
// of the stall limit ends the call.
func (w *watchdog) tokens() {
	if w.timer != nil || w.stall <= 0 {
		return
	}
	stall := w.stall
	w.timer = time.AfterFunc(stall, func() {
		w.cancel(&timeLimitError{fmt.Sprintf("the stream stalled: nothing for %v after the reply had begun", stall)})
	})
}

// stop ends the watchdog when the call returns.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	if w.first != nil {
		w.first.Stop()
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cancel(context.Canceled)
}
