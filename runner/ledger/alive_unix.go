//go:build unix

package ledger

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process with this pid exists on this host.
// Signal 0 checks without sending; EPERM means it exists but is another
// user's. A zombie (dead, not yet reaped) counts as alive: its stale
// heartbeat settles it.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
