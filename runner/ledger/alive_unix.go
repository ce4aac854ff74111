//go:build unix

package ledger

import (
	"errors"
	"syscall"
)

// canSignal: pids of this host can be checked.
const canSignal = true

// pidAlive reports whether a process with this pid exists on this host.
// Signal 0 checks without sending; EPERM means it exists but is another
// user's. A zombie counts here; procStart tells it apart where it can.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
