package config

import (
	"encoding/json"
	"pitwall/internal/redact"
	"slices"
	"strings"
)

// RedactedJSON is the resolved config as JSON, for the ledger's run record.
// API keys never appear: the config holds only the names of the variables
// that hold them (api_key_env), and credentials written into a server or
// judge url (user:password@, ?api_key=...) are masked by redact.URL.
// Durations are written as Go duration strings ("5m0s"); the battery's test
// ids are listed under "tests", their categories and severities under
// "test_categories" and "test_severities" (id → value, tests with one
// only), and what the battery asked for that pitwall will not act on under
// "warnings".
func (c *Config) RedactedJSON() string {
	cp := *c
	cp.Servers = slices.Clone(c.Servers)
	for i := range cp.Servers {
		cp.Servers[i].URL = redact.URL(cp.Servers[i].URL)
	}
	cp.Scoring = c.Scoring.Redacted()
	if strings.Contains(cp.DB, "://") {
		cp.DB = redact.URL(cp.DB) // a postgres:// ledger's password
	}
	cp.Ledger.URL = redact.URL(cp.Ledger.URL)
	b, err := json.Marshal(&cp)
	if err != nil {
		return "{}"
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "{}"
	}
	m["path"] = c.Path
	if run, ok := m["run"].(map[string]any); ok {
		run["timeout"] = c.Run.Timeout.String()
	}
	ids := make([]string, len(c.Tests))
	cats, sevs := map[string]string{}, map[string]string{}
	for i, t := range c.Tests {
		ids[i] = t.ID
		if t.Category != "" {
			cats[t.ID] = t.Category
		}
		if t.Severity != "" {
			sevs[t.ID] = t.Severity
		}
	}
	m["tests"] = ids
	if len(cats) > 0 {
		m["test_categories"] = cats
	}
	if len(sevs) > 0 {
		m["test_severities"] = sevs
	}
	out, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(out)
}

// Redacted is the scoring section with the credentials in its judges' urls
// masked: what may be stored or shown (the ledger's scoring record).
func (s Scoring) Redacted() Scoring {
	s.Judges = slices.Clone(s.Judges)
	for i := range s.Judges {
		s.Judges[i].URL = redact.URL(s.Judges[i].URL)
	}
	return s
}

// Unmasked is s as read back from a ledger, with each judge url that
// Redacted masked taken again from cur, the config loaded now, where cur
// has a judge of the same name whose url masks to the same text. The
// ledger keeps no credentials, so re-judging a run needs them from the
// config. It also returns the judges whose url stays masked (gone from
// the config, or changed), for an error that names them.
func (s Scoring) Unmasked(cur Scoring) (Scoring, []string) {
	s.Judges = slices.Clone(s.Judges)
	var masked []string
	for i := range s.Judges {
		j := &s.Judges[i]
		if !strings.Contains(j.URL, redact.Mask) {
			continue // nothing was masked
		}
		k := slices.IndexFunc(cur.Judges, func(c Judge) bool { return c.Name == j.Name && redact.URL(c.URL) == j.URL })
		if k < 0 {
			masked = append(masked, j.Name)
			continue
		}
		j.URL = cur.Judges[k].URL
	}
	return s, masked
}
