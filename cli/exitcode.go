package cli

import (
	"errors"
	"fmt"
	"io"

	"pitwall/runner/ledger"
)

// recordExit records in the ledger the exit code a command returns for the
// run it ran, once the run's end is recorded, so that `runs` and `show`
// report what the process returned (a gate that passed, an interrupt's
// 130) rather than a code computed again from the verdicts. A ledger that
// will not take it changes nothing but a line on stderr: the code is
// still returned. A run another process took over is that process's to
// record, and the run's own message has said so.
func recordExit(led *ledger.Ledger, id string, code int, stderr io.Writer) int {
	if led == nil || id == "" {
		return code
	}
	if err := led.SetExitCode(id, code); err != nil && !errors.Is(err, ledger.ErrTakenOver) {
		fmt.Fprintf(stderr, "pitwall: the ledger did not record the exit code %d of run %s (runs and show will give the code its verdicts earn): %v\n", code, id, err)
	}
	return code
}

// exitOf is the exit code of run r as `runs` and `show` report it: the one
// its process returned, when the ledger has it (recordExit), else the one
// computed from its verdicts (runs recorded before pitwall kept it).
func exitOf(r ledger.RunRow, computed func() int) int {
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return computed()
}
