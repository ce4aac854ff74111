package gpu

import (
	"errors"
	"fmt"
	"time"

	"pitwall/gpu/chat"
)

// A 429's Retry-After is honoured only as far as the job may wait: never
// past its Timeout nor past Options.MaxWait. A wait beyond them ends the
// job at once, rate-limited, saying what the server asked for, instead of
// holding the run for as long as the server likes (a day, say).

// waitLimit is how long j may wait on a server's Retry-After, and the
// setting that says so: the shorter of its timeout and max_wait; 0 when
// neither is set (it waits as long as the server asks).
func (f *Fleet) waitLimit(j *Job) (string, time.Duration) {
	name, limit := "", time.Duration(0)
	if j.Timeout > 0 {
		name, limit = "timeout", j.Timeout
	}
	if m := f.opts.MaxWait; m > 0 && (limit == 0 || m < limit) {
		name, limit = "max_wait", m
	}
	return name, limit
}

// rateLimitBeyond turns a 429 whose Retry-After is beyond what j may wait
// into the end of the job (ErrGaveUp: not to be retried); any other error
// is returned as it is.
func (f *Fleet) rateLimitBeyond(j *Job, err error) error {
	var e *chat.Error
	if !errors.As(err, &e) || e.Class != chat.ClassRateLimit || e.RetryAfter <= 0 {
		return err
	}
	name, limit := f.waitLimit(j)
	if limit <= 0 || e.RetryAfter <= limit {
		return err
	}
	out := rateLimitedErr(e.Server, e.Model, e.RetryAfter, name, limit)
	out.Status = e.Status
	return out
}

// heldOutLocked is the end of queued job q when every server that could
// run it is up but rate-limited past what q may wait; nil while one of
// them takes work, may come back (down servers are the stranded path's),
// or ends its hold in time.
func (f *Fleet) heldOutLocked(q *fleetJob, clock time.Time) *chat.Error {
	name, limit := f.waitLimit(q.job)
	if limit <= 0 {
		return nil
	}
	var first *fleetServer
	for _, s := range f.servers {
		if !s.couldRun(q) {
			continue
		}
		if !s.up || !s.held(clock) || s.holdEnd(clock).Sub(clock) <= limit {
			return nil
		}
		if first == nil || s.holdEnd(clock).Before(first.holdEnd(clock)) {
			first = s
		}
	}
	if first == nil {
		return nil
	}
	e := rateLimitedErr(first.cfg.Name, q.job.Request.Model, first.heldFor, name, limit)
	e.Message += fmt.Sprintf(" (held until %s; not sent)", first.holdEnd(clock).Format("15:04:05"))
	return e
}

func rateLimitedErr(server, model string, asked time.Duration, limitName string, limit time.Duration) *chat.Error {
	return &chat.Error{Class: chat.ClassRateLimit, Server: server, Model: model, RetryAfter: asked,
		Message: fmt.Sprintf("server %s asked to retry after %s, beyond %s %s", server, WaitText(asked), limitName, WaitText(limit)),
		Err:     ErrGaveUp}
}

// WaitText writes a wait the way people set one: whole hours as "24h",
// else seconds, "300s" (a wait of a second or more to the second: an HTTP
// date's wait is a day less the time the answer took).
func WaitText(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	d = d.Round(time.Second)
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
