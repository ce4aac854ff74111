package ui

import (
	"strings"
	"testing"
	"time"

	"pitwall/runner/state"
)

// The summary's attempts line counts cells sent again, not an agent's
// steps: each step of a loop is a request of its own, so a three-step loop
// sent once is no retry, and one step sent twice is.
func TestSummaryCountsAnAgentsStepsAsNoRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		attempts int
		want     string // "" when no attempts line is due
	}{
		{"three steps, each sent once", 3, ""},
		{"three steps, one sent twice", 4, "attempts 4 inference attempts for 1 cells run: 1 cell was sent more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := next(makeRun(1, 1, 1, "gemma"))
			set(run, 0, 0, 0, completed(500*time.Millisecond, 20), func(c *state.Cell) {
				c.EditReply().Steps = make([]state.Step, 3)
				c.Attempts = tc.attempts
			})
			finish(run, state.RunCompleted)
			sum := Summary(run, "gemma", Options{})
			line := ""
			for _, l := range strings.Split(sum, "\n") {
				if strings.HasPrefix(l, "attempts ") {
					line = l
				}
			}
			if line != tc.want {
				t.Errorf("attempts line %q, want %q:\n%s", line, tc.want, sum)
			}
		})
	}
}
