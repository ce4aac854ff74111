package importrun

import (
	"encoding/json"

	"pitwall/runner/ledger"
)

// Provenance is where an imported run came from, as its record in the
// ledger keeps it (under "imported" in the run's config record).
type Provenance struct {
	Format  string   `json:"format"`  // the kind of file: "prompt-prix results export", …
	File    string   `json:"file"`    // its absolute path when imported
	SHA256  string   `json:"sha256"`  // of its bytes
	Battery string   `json:"battery"` // the battery it was joined to, absolute
	RanAt   string   `json:"ran_at,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// Imported reports whether a run in the ledger was imported, and from
// what. Commands that would send a run's requests again (resume, retry) or
// reopen it on its fleet (show) ask this first: an imported run's config
// names a placeholder server, and its judges come from the config a
// re-judge is given.
func Imported(run ledger.RunRow) (Provenance, bool) {
	var rec struct {
		Imported *Provenance `json:"imported"`
	}
	if run.ConfigJSON == "" || json.Unmarshal([]byte(run.ConfigJSON), &rec) != nil || rec.Imported == nil {
		return Provenance{}, false
	}
	return *rec.Imported, true
}
