package config

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// RedactedJSON is the resolved config as JSON, for the ledger's run record.
// API keys never appear: the config holds only the names of the variables
// that hold them (api_key_env), and credentials written into a server or
// judge url (user:password@, ?api_key=...) are masked. Durations are
// written as Go duration strings ("5m0s"); the battery's test ids are
// listed under "tests".
func (c *Config) RedactedJSON() string {
	cp := *c
	cp.Servers = slices.Clone(c.Servers)
	for i := range cp.Servers {
		cp.Servers[i].URL = redactURL(cp.Servers[i].URL)
	}
	cp.Scoring.Judges = slices.Clone(c.Scoring.Judges)
	for i := range cp.Scoring.Judges {
		cp.Scoring.Judges[i].URL = redactURL(cp.Scoring.Judges[i].URL)
	}
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
	for i, t := range c.Tests {
		ids[i] = t.ID
	}
	m["tests"] = ids
	out, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(out)
}

// secretParams are query parameters that carry credentials on some hosted
// APIs (Azure's api-key, Gemini's key).
var secretParams = []string{"key", "api_key", "api-key", "apikey", "token", "access_token", "secret", "password"}

func redactURL(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "[unparseable url redacted]"
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			for _, p := range secretParams {
				if strings.EqualFold(k, p) {
					q.Set(k, "REDACTED")
				}
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}
