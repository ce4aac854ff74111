package history

import (
	"encoding/json"

	"pitwall/runner/ledger"
)

// Record is what a run's config record in the ledger says of its battery
// beyond the test ids: each test's category and severity, and what the
// battery asked for that pitwall loaded but would not act on. Runs
// recorded before pitwall kept them read with none.
type Record struct {
	Categories map[string]string // test id → category; nil when no test has one
	Severities map[string]string // test id → critical | warning | info; nil when no test has one
	Warnings   []string
}

// RunRecord reads a run's Record from its config record (see Record).
func RunRecord(run ledger.RunRow) Record {
	return readRecord(run.ConfigJSON)
}

// readRecord reads a config record, which may list its tests as ids or as
// objects with an id, a category and a severity, and map them in
// "test_categories" and "test_severities" (config.RedactedJSON writes
// those). An unreadable record gives nothing: these are a breakdown, not a
// reason to refuse a show or an export.
func readRecord(configJSON string) Record {
	var c struct {
		Tests      []json.RawMessage `json:"tests"`
		Categories map[string]string `json:"test_categories"`
		Severities map[string]string `json:"test_severities"`
		Warnings   []string          `json:"warnings"`
	}
	if err := decode(configJSON, &c); err != nil {
		return Record{}
	}
	cats, sevs := map[string]string{}, map[string]string{}
	for _, raw := range c.Tests {
		var t struct {
			ID       string `json:"id"`
			Category string `json:"category"`
			Severity string `json:"severity"`
		}
		if json.Unmarshal(raw, &t) != nil || t.ID == "" {
			continue
		}
		if t.Category != "" {
			cats[t.ID] = t.Category
		}
		if t.Severity != "" {
			sevs[t.ID] = t.Severity
		}
	}
	for id, v := range c.Categories {
		if v != "" {
			cats[id] = v
		}
	}
	for id, v := range c.Severities {
		if v != "" {
			sevs[id] = v
		}
	}
	return Record{Categories: nilIfEmpty(cats), Severities: nilIfEmpty(sevs), Warnings: c.Warnings}
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
