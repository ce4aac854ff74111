package reap

import (
	"context"
	"testing"
	"time"
)

// Step bounds one step of a test (a run, an export, a CLI call) by want
// and by the test binary's deadline less a minute, so that on a busy
// machine the step fails with its own message and the test's cleanups
// still stop its servers, instead of go test's -timeout panicking past
// every one of them.
func Step(t testing.TB, want time.Duration) (context.Context, context.CancelFunc) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			if left := time.Until(end) - time.Minute; left < want {
				want = max(left, time.Second)
			}
		}
	}
	return context.WithTimeout(context.Background(), want)
}
