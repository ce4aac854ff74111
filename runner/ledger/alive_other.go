//go:build !unix

package ledger

// canSignal: pids cannot be checked here, so a run's owner on this host is
// judged by its lease, as another host's is (rule 5 of goneWhy).
const canSignal = false

func pidAlive(pid int) bool { return pid > 0 }
