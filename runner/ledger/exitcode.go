package ledger

import (
	"fmt"
)

// SetExitCode records the exit code the process that ran a run returned,
// after its end is recorded (FinishRun): what `pitwall runs` and `show`
// report, gates and interrupts included, rather than a code computed again
// from the verdicts. The end a code was given for is the one it belongs
// to: once the run starts or ends again (resume, retry), the code is gone
// (schema 7) until the new end is given one. The code is read back as
// RunRow.ExitCode.
func (l *Ledger) SetExitCode(id string, code int) error {
	name := "record the exit code of run " + id
	return l.write(id, name, func(b *batch) error {
		return l.updateRun(b, name, fmt.Sprintf("record the exit code of run %q (not found, or not ended)", id),
			`UPDATE runs SET exit_code = ? WHERE id = ? AND ended_ms IS NOT NULL`, code, id)
	})
}
