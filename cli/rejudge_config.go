package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"pitwall/config"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
)

// judgingConfig is the config a re-judge with --config runs under: the
// run's own tests, models and shape, from run (the config the run was made
// with, or the one `pitwall import` wrote for it), and everything that
// judges them from the file at path: its servers, simulated fleet, run
// settings and judges. Overrides apply to both, and the ledger is db.
func judgingConfig(run *config.Config, path, db string, ov config.Overrides) (*config.Config, error) {
	ov.DB = db
	jc, err := config.Load(path, ov, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	out := *jc
	out.Name = run.Name
	// Resolved: the battery was written relative to the run's config, and
	// out.Path is the judges' config.
	out.Battery = run.BatteryPath()
	out.Models = run.Models
	out.Tests = run.Tests
	out.Warnings = run.Warnings
	out.Run.Repeat = run.Run.Repeat
	out.DB = run.DB
	return &out, nil
}

// adoptJudges makes cfg's judges the run's when the run was recorded with
// none (checks only, or imported from another tool): it changes row's
// scoring to cfg's and reports true, and the caller records it in the
// ledger (ledger.SetScoring) so that show and export read the verdicts the
// re-judge gives as the run's own. A run that has judges keeps them.
func adoptJudges(row *ledger.RunRow, cfg *config.Config) (bool, error) {
	stored, err := history.Scoring(*row)
	if err != nil {
		return false, err
	}
	if len(stored.Judges) > 0 || len(cfg.Scoring.Judges) == 0 {
		return false, nil
	}
	b, err := json.Marshal(cfg.Scoring.Redacted())
	if err != nil {
		return false, fmt.Errorf("run %s: recording its judges: %w", row.ID, err)
	}
	row.ScoringMode, row.ScoringJSON = string(cfg.Plan().Mode), string(b)
	return true, nil
}
