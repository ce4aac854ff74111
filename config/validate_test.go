package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadReportsConfigErrorsWithFileLineAndField(t *testing.T) {
	t.Parallel()
	bad := func(name string) string { return filepath.Join("testdata", "bad", name) }
	tests := []struct {
		name   string
		file   string
		field  string
		at     string // text of the line the error must point to; "" for none
		nth    int    // which line containing at (0 means the first)
		subs   []string
		atFile string // the file the error names, when not file
	}{
		{"syntax error", "syntax.toml", "", `timeout = "30s`, 0, []string{"TOML syntax"}, ""},
		{"unknown key suggests the nearest", "unknown_key.toml", "run.max_token", "max_token = 10", 0,
			[]string{`unknown key "max_token"`, "did you mean `max_tokens`?"}, ""},
		{"unknown key in the second array element", "unknown_key.toml", "servers[1].slotz", "slotz", 0,
			[]string{"did you mean `slots`?"}, ""},
		{"unknown key far from any known lists them", "unknown_key.toml", "scoring.colour", "colour", 0,
			[]string{"valid: mode, samples"}, ""},
		{"string where a list goes", "wrong_type.toml", "models", `models  = "m1"`, 0, []string{"must be an array"}, ""},
		{"bare number for a duration", "wrong_type.toml", "run.timeout", "timeout = 300", 0,
			[]string{"duration string", `timeout = "300s"`}, ""},
		{"string for an integer in the second server", "wrong_type.toml", "servers[1].slots", `slots  = "two"`, 0,
			[]string{"whole number", `"two"`}, ""},
		{"timeout zero", "bad_values.toml", "run.timeout", `timeout    = "0s"`, 0, []string{"timeout must be positive"}, ""},
		{"repeat zero", "bad_values.toml", "run.repeat", "repeat     = 0", 0, []string{"at least 1"}, ""},
		{"negative retries", "bad_values.toml", "run.retries", "retries", 0, []string{"negative"}, ""},
		{"unknown judging", "bad_values.toml", "run.judging", "judging", 0, []string{`"threephase"`, "two-phase"}, ""},
		{"max_tokens zero", "bad_values.toml", "run.max_tokens", "max_tokens = 0", 0, []string{"at least 1"}, ""},
		{"slots zero", "bad_values.toml", "servers[0].slots", "slots  = 0", 0, []string{"at least 1"}, ""},
		{"unknown kind", "bad_values.toml", "servers[1].kind", "lmstudo", 0, []string{"did you mean `lmstudio`?"}, ""},
		{"samples zero", "bad_values.toml", "scoring.samples", "samples", 0, []string{"at least 1"}, ""},
		{"min_score above one", "bad_values.toml", "scoring.min_score", "min_score", 0, []string{"outside 0..1"}, ""},
		{"unknown aggregation", "bad_values.toml", "scoring.aggregation", "aggregation", 0, []string{`"avg"`, "mean, median, majority, min"}, ""},
		{"unknown mode", "bad_values.toml", "scoring.mode", "juri", 0, []string{"did you mean `jury`?"}, ""},
		{"time scale negative", "bad_values.toml", "sim.time_scale", "time_scale", 0, []string{"0 or more"}, ""},
		{"server without url", "servers.toml", "servers[0].url", "[[servers]]", 1, []string{`"gpu0" has no url`, `kind = "sim"`}, ""},
		{"duplicate server names both", "servers.toml", "servers[1].name", `name   = "gpu0"`, 0, []string{"duplicate server name", "first at line 5"}, ""},
		{"sim server without models", "servers.toml", "servers[1].models", "[[servers]]", 2, []string{"lists no models"}, ""},
		{"url without scheme", "servers.toml", "servers[2].url", "127.0.0.1:1234", 0, []string{"must start with http://"}, ""},
		{"api key in api_key_env", "servers.toml", "servers[2].api_key_env", "api_key_env", 0, []string{"NAME"}, ""},
		{"judge with no server or url", "judges.toml", "scoring.judges[0].server", "[[scoring.judges]]", 1, []string{"names no server and no url"}, ""},
		{"judge on an unknown server", "judges.toml", "scoring.judges[1].server", `server = "gpu9"`, 0, []string{"not in [[servers]]", "did you mean `gpu0`?"}, ""},
		{"duplicate judge names", "judges.toml", "scoring.judges[2].name", `name   = "typo"`, 2, []string{"duplicate judge name"}, ""},
		{"judge weight zero", "judges.toml", "scoring.judges[2].weight", "weight = 0.0", 0, []string{"above 0"}, ""},
		{"judge model its server lacks", "judges.toml", "scoring.judges[3].model", `"judge-x"`, 0, []string{`does not offer judge model "judge-x"`}, ""},
		{"jury without judges", "mode_no_judges.toml", "scoring.mode", `mode = "jury"`, 0, []string{"0 judge"}, ""},
		{"a model by two names", "models_twice.toml", "models[1]", `"tiny-a:latest",`, 0,
			[]string{`"tiny-a:latest" is "tiny-a" again`, "test it twice"}, ""},
		{"a model by two spellings", "models_twice.toml", "models[3]", `"tiny-b",`, 0,
			[]string{`"tiny-b" is "Tiny-B" again`}, ""},
		{"no models", "models_empty.toml", "models", "models  = []", 0, []string{"no models"}, ""},
		{"model no server offers", "model_not_offered.toml", "models[1]", `"gemma-3-12",`, 0,
			[]string{`"gemma-3-12" is not offered`, "did you mean `gemma-3-12b`?"}, ""},
		{"sim model no sim server offers", "model_not_offered.toml", "sim.models[1].name", `"gemma3-12b"`, 0,
			[]string{"no sim server offers", "did you mean `gemma-3-12b`?"}, ""},
		{"sim skill above one", "model_not_offered.toml", "sim.models[1].skill", "skill = 1.5", 0, []string{"outside 0..1"}, ""},
		{"battery not found", "battery_missing.toml", "battery", "batteries/nope.toml", 0,
			[]string{filepath.Join("testdata", "bad", "batteries", "nope.toml"), "relative to the config's folder"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := bad(tt.file)
			_, err := Load(file, Overrides{}, noEnv)
			line := 0
			if tt.at != "" {
				line = lineOf(t, file, tt.at, max(tt.nth, 1))
			}
			wantErr(t, err, file, line, tt.field, tt.subs...)
		})
	}
}

func TestLoadReturnsEveryErrorAtOnce(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join("testdata", "bad", "bad_values.toml"), Overrides{}, noEnv)
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %v", err)
	}
	if len(es) < 12 {
		t.Errorf("got %d errors, want every one of the file's 12 problems:\n%v", len(es), err)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != len(es) {
		t.Errorf("Error() prints %d lines for %d errors", n, len(es))
	}
	for i := 1; i < len(es); i++ {
		if es[i].Line < es[i-1].Line {
			t.Errorf("errors out of line order: %d after %d", es[i].Line, es[i-1].Line)
		}
	}
	var one *Error
	if !errors.As(err, &one) {
		t.Errorf("errors.As cannot reach an *Error inside Errors")
	}
}

func TestAPIKeyWrittenIntoApiKeyEnvIsNeverEchoed(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join("testdata", "bad", "servers.toml"), Overrides{}, noEnv)
	if err == nil {
		t.Fatal("want errors")
	}
	if strings.Contains(err.Error(), "sk-live") {
		t.Errorf("the key leaked into the message:\n%v", err)
	}
}

func TestMissingOrUnreadableConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
		subs []string
	}{
		{"missing file", filepath.Join("testdata", "nope.toml"), []string{"not found", "examples/"}},
		{"a folder", filepath.Join("testdata", "good"), []string{"cannot read config"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path, Overrides{}, noEnv)
			wantErr(t, err, tt.path, 0, "", tt.subs...)
		})
	}
}

func TestLoadDefaultsToPitwallTomlInTheWorkingDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Load("", Overrides{}, nil)
	wantErr(t, err, DefaultPath, 0, "", "not found")
}

func TestBatteryErrorsComeBackThroughLoad(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join("testdata", "bad", "battery_bad.toml"), Overrides{}, noEnv)
	file := filepath.Join("testdata", "bad", "..", "batteries", "bad_tests.toml")
	wantErr(t, err, file, lineOf(t, file, "containz", 1), "tests[4].checks[0].type", "unknown check type")
}
