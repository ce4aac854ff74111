package runner

import (
	"encoding/json"
	"fmt"

	"pitwall/config"
	"pitwall/runner/ledger"
)

// Reopen brings a finished run back from the ledger as a live Run that can
// be browsed, re-judged and switched between judges; nothing is sent again
// for inference. cfg is the run's config, loaded again: its battery must
// still hold the run's tests (their prompts are what the judges read).
func Reopen(cfg *config.Config, id string, opts Options) (*Run, error) {
	if opts.Ledger == nil {
		return nil, fmt.Errorf("runner: a ledger is required")
	}
	row, err := opts.Ledger.Run(id)
	if err != nil {
		return nil, err
	}
	byID := map[string]config.Test{}
	for _, t := range cfg.Tests {
		byID[t.ID] = t
	}
	tests := make([]config.Test, 0, len(row.Tests))
	for _, tid := range row.Tests {
		t, ok := byID[tid]
		if !ok {
			return nil, fmt.Errorf("run %s: test %q is no longer in %s, so it cannot be judged again", row.ID, tid, cfg.Battery)
		}
		tests = append(tests, t)
	}
	again := *cfg
	again.Tests, again.Models = tests, row.Models
	// The run is judged as it was: its scoring, not the file's today.
	var sc config.Scoring
	if row.ScoringJSON != "" && json.Unmarshal([]byte(row.ScoringJSON), &sc) == nil {
		again.Scoring = sc
	}
	again.Run.Repeat = max(row.Repeat, 1)
	opts.RunID = row.ID
	r, err := New(&again, opts)
	if err != nil {
		return nil, err
	}
	snap, err := LoadSnapshot(opts.Ledger, row.ID, r.active)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.table.rows = snap.Rows
	for i := range r.table.owned {
		r.table.owned[i] = false
	}
	r.counts = snap.Counts
	r.tokens = snap.TokensGenerated
	r.status, r.phase = snap.Status, PhaseDone
	r.started, r.ended = snap.Started, snap.Ended
	r.finished, r.judgeStarts = true, true
	r.recorded, r.submitted = true, true // its end is in the ledger already
	r.inflight = 0
	r.verdictsDirty = true
	r.mu.Unlock()
	close(r.done)
	r.pub.start()
	r.pub.finalize()
	return r, nil
}

// runConfigPath is where a run's config came from, as its ledger row says.
func runConfigPath(row ledger.RunRow) string {
	var c struct {
		Path string `json:"path"`
	}
	if err := jsonUnmarshal(row.ConfigJSON, &c); err != nil {
		return ""
	}
	return c.Path
}
