package ledger

import (
	"fmt"
)

// SetExitCode records the exit code the process that ran a run returned,
// after its end is recorded (FinishRun): what `pitwall runs` and `show`
// report, gates and interrupts included, rather than a code computed again
// from the verdicts. The end a code was given for is the one it belongs
// to: once the run starts or ends again (resume, retry), the code is gone
// (schema 7) until the new end is given one.
func (l *Ledger) SetExitCode(id string, code int) error {
	name := "record the exit code of run " + id
	return l.write(name, func(b *batch) error {
		res, err := b.tx.Exec(`UPDATE runs SET exit_code = ? WHERE id = ? AND ended_ms IS NOT NULL`, code, id)
		if err != nil {
			return l.wrap(name, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return l.wrap(name, err)
		} else if n == 0 {
			return declined{l.wrap(fmt.Sprintf("record the exit code of run %q (not found, or not ended)", id), ErrNotFound)}
		}
		return nil
	})
}

// ExitCode is the exit code recorded for a run (SetExitCode, and
// RunRow.ExitCode of the run's row); ok is false when none is: a run of an
// earlier build, one still running or interrupted, or one that started
// again since.
func (l *Ledger) ExitCode(id string) (code int, ok bool, err error) {
	r, err := l.Run(id)
	if err != nil || r.ExitCode == nil {
		return 0, false, err
	}
	return *r.ExitCode, true, nil
}
