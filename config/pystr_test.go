package config

import (
	"encoding/json"
	"testing"
)

func TestPyStrWritesWhatPythonsStrWrites(t *testing.T) {
	for in, want := range map[string]string{
		`"downloads/"`:                "downloads/",
		`5`:                           "5",
		`5.0`:                         "5.0",
		`0.1`:                         "0.1",
		`1e20`:                        "1e+20",
		`0.00001`:                     "1e-05",
		`true`:                        "True",
		`null`:                        "None",
		`["a", "b"]`:                  "['a', 'b']",
		`{"b": 1, "a": [true, null]}`: "{'b': 1, 'a': [True, None]}",
		`["it's"]`:                    `["it's"]`,
		`["a\nb"]`:                    `['a\nb']`,
	} {
		if got, ok := PyStr(json.RawMessage(in)); !ok || got != want {
			t.Errorf("PyStr(%s) = %q, want %q", in, got, want)
		}
	}
}

// prompt-prix looks a mock up by str() of each argument, so its batteries
// write keys as Python prints values; JSON's spelling still matches too.
func TestMockKeysWrittenAsPythonsStrMatch(t *testing.T) {
	m := MockTools{"f": {"True": "flag on", "['a.txt', 'b.txt']": "two files", "2.0": "two", "{'k': 1}": "object", "None": "nothing"}}
	g := MockTools{"g": {"true": "json true", "3": "three"}}
	for _, tt := range []struct {
		mocks MockTools
		name  string
		args  string
		want  string
	}{
		{m, "f", `{"on": true}`, "flag on"},
		{m, "f", `{"paths": ["a.txt", "b.txt"]}`, "two files"},
		{m, "f", `{"n": 2.0}`, "two"},
		{m, "f", `{"o": {"k": 1}}`, "object"},
		{m, "f", `{"x": null}`, "nothing"},
		{g, "g", `{"on": true}`, "json true"},
		{g, "g", `{"n": 3}`, "three"},
	} {
		if got, ok := tt.mocks.Observe(tt.name, tt.args); !ok || got != tt.want {
			t.Errorf("Observe(%s) = %q, %v; want %q", tt.args, got, ok, tt.want)
		}
	}
}
