package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
)

// SetScoring replaces the scoring a run is recorded with: its mode and its
// scoring section (JSON, judges' urls redacted, as CreateRun takes it).
// A run scored by its checks alone, or imported from another tool, that is
// then re-judged by the judges of another config records them here, so
// that reading the run back (show, export) sees their verdicts as the
// run's own.
func (l *Ledger) SetScoring(id, mode, scoringJSON string) error {
	name := "set scoring of run " + id
	if l.wr == nil {
		return l.wrap(name, ErrReadOnly)
	}
	if scoringJSON != "" && !json.Valid([]byte(scoringJSON)) {
		return l.wrap(name, errors.New("the scoring record is not JSON"))
	}
	if err := checkNoSecrets(scoringJSON); err != nil {
		return l.wrap(name, err)
	}
	return l.write(id, name, func(b *batch) error {
		return l.updateRun(b, name, fmt.Sprintf("set scoring of run %q", id),
			`UPDATE runs SET scoring_mode = ?, scoring_json = ? WHERE id = ?`, mode, scoringJSON, id)
	})
}
