package config

import (
	"path/filepath"
	"pitwall/judge/scoring"
	"reflect"
	"slices"
	"testing"
	"time"
)

// precedenceConfig sets every overridable value to something other than
// its default, so each layer's win is visible.
const precedenceConfig = `
battery = "tools.toml"
models  = ["a", "b", "c"]
db      = "file.db"

[run]
timeout = "60s"
repeat  = 3
strict  = false

[[servers]]
name   = "s"
kind   = "sim"
models = ["a", "b", "c", "ja", "jb"]

[scoring]
samples = 2

[[scoring.judges]]
name   = "ja"
model  = "ja"
server = "s"

[[scoring.judges]]
name   = "jb"
model  = "jb"
server = "s"

[sim]
time_scale = 0.5
`

func TestPrecedenceFlagsOverEnvOverFileOverDefaults(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	minimal := filepath.Join("testdata", "good", "minimal.toml")
	tests := []struct {
		name  string
		file  string // "" means precedenceConfig
		env   map[string]string
		flags Overrides
		get   func(*Config) any
		want  any
	}{
		{"repeat: default", minimal, nil, Overrides{}, func(c *Config) any { return c.Run.Repeat }, 1},
		{"repeat: file", "", nil, Overrides{}, func(c *Config) any { return c.Run.Repeat }, 3},
		{"repeat: env over file", "", map[string]string{EnvRepeat: "4"}, Overrides{}, func(c *Config) any { return c.Run.Repeat }, 4},
		{"repeat: flag over env", "", map[string]string{EnvRepeat: "4"}, Overrides{Repeat: 5}, func(c *Config) any { return c.Run.Repeat }, 5},

		{"db: default", minimal, nil, Overrides{}, func(c *Config) any { return c.DB }, ".pitwall/ledger.db"},
		{"db: file", "", nil, Overrides{}, func(c *Config) any { return c.DB }, "file.db"},
		{"db: env over file", "", map[string]string{EnvDB: "env.db"}, Overrides{}, func(c *Config) any { return c.DB }, "env.db"},
		{"db: flag over env", "", map[string]string{EnvDB: "env.db"}, Overrides{DB: "flag.db"}, func(c *Config) any { return c.DB }, "flag.db"},

		{"timeout: default", minimal, nil, Overrides{}, func(c *Config) any { return c.Run.Timeout }, 300 * time.Second},
		{"timeout: file", "", nil, Overrides{}, func(c *Config) any { return c.Run.Timeout }, 60 * time.Second},
		{"timeout: env over file", "", map[string]string{EnvTimeout: "2m"}, Overrides{}, func(c *Config) any { return c.Run.Timeout }, 2 * time.Minute},
		{"timeout: env in bare seconds", "", map[string]string{EnvTimeout: "45"}, Overrides{}, func(c *Config) any { return c.Run.Timeout }, 45 * time.Second},
		{"timeout: flag over env", "", map[string]string{EnvTimeout: "2m"}, Overrides{Timeout: time.Second}, func(c *Config) any { return c.Run.Timeout }, time.Second},

		{"strict: default", minimal, nil, Overrides{}, func(c *Config) any { return c.Run.Strict }, false},
		{"strict: env over file", "", map[string]string{EnvStrict: "true"}, Overrides{}, func(c *Config) any { return c.Run.Strict }, true},
		{"strict: flag false over env true", "", map[string]string{EnvStrict: "1"}, Overrides{Strict: &no}, func(c *Config) any { return c.Run.Strict }, false},
		{"strict: flag true", "", nil, Overrides{Strict: &yes}, func(c *Config) any { return c.Run.Strict }, true},

		{"samples: default", minimal, nil, Overrides{}, func(c *Config) any { return c.Scoring.Samples }, 1},
		{"samples: file", "", nil, Overrides{}, func(c *Config) any { return c.Scoring.Samples }, 2},
		{"samples: env over file", "", map[string]string{EnvJudgeSamples: "5"}, Overrides{}, func(c *Config) any { return c.Scoring.Samples }, 5},
		{"samples: flag over env", "", map[string]string{EnvJudgeSamples: "5"}, Overrides{JudgeSamples: 7}, func(c *Config) any { return c.Scoring.Samples }, 7},

		{"time scale: default", minimal, nil, Overrides{}, func(c *Config) any { return c.SimTimeScale() }, 1.0},
		{"time scale: file", "", nil, Overrides{}, func(c *Config) any { return c.SimTimeScale() }, 0.5},
		{"time scale: env over file", "", map[string]string{EnvSimTimeScale: "0.01"}, Overrides{}, func(c *Config) any { return c.SimTimeScale() }, 0.01},
		{"time scale: flag over env", "", map[string]string{EnvSimTimeScale: "0.01"}, Overrides{TimeScale: ptr(2.0)}, func(c *Config) any { return c.SimTimeScale() }, 2.0},
		{"time scale: env 0 is instant", "", map[string]string{EnvSimTimeScale: "0"}, Overrides{}, func(c *Config) any { return c.SimTimeScale() }, 0.0},
		{"time scale: flag 0 over env", "", map[string]string{EnvSimTimeScale: "0.01"}, Overrides{TimeScale: ptr(0.0)}, func(c *Config) any { return c.SimTimeScale() }, 0.0},

		{"models: file", "", nil, Overrides{}, func(c *Config) any { return c.Models }, []string{"a", "b", "c"}},
		{"models: env subset", "", map[string]string{EnvModels: "c, a"}, Overrides{}, func(c *Config) any { return c.Models }, []string{"c", "a"}},
		{"models: flag over env", "", map[string]string{EnvModels: "c,a"}, Overrides{Models: []string{"b"}}, func(c *Config) any { return c.Models }, []string{"b"}},

		{"max_wait: default", "", nil, Overrides{}, func(c *Config) any { return c.Run.MaxWait }, DefaultMaxWait},
		{"max_wait: env", "", map[string]string{EnvMaxWait: "30s"}, Overrides{}, func(c *Config) any { return c.Run.MaxWait }, 30 * time.Second},
		{"max_wait: env 0 waits for ever", "", map[string]string{EnvMaxWait: "0"}, Overrides{}, func(c *Config) any { return c.Run.MaxWait }, time.Duration(0)},
		{"max_wait: flag over env", "", map[string]string{EnvMaxWait: "30s"}, Overrides{MaxWait: time.Minute}, func(c *Config) any { return c.Run.MaxWait }, time.Minute},
		{"judge: file makes a jury", "", nil, Overrides{}, func(c *Config) any { return c.JudgeNames() }, []string{"ja", "jb"}},
		{"judge: env picks one", "", map[string]string{EnvJudge: "jb"}, Overrides{}, func(c *Config) any { return c.JudgeNames() }, []string{"jb"}},
		{"judge: flag over env", "", map[string]string{EnvJudge: "jb"}, Overrides{Judge: "ja"}, func(c *Config) any { return c.JudgeNames() }, []string{"ja"}},
		{"judge: flag none over env", "", map[string]string{EnvJudge: "jb"}, Overrides{Judge: "none"}, func(c *Config) any { return c.Scoring.Mode }, scoring.ModeDeterministic},

		{"tests: all by default", "", nil, Overrides{}, func(c *Config) any { return testIDs(c.Tests) },
			[]string{"weather-paris", "capital-france", "json-reply", "named-choice"}},
		{"tests: env glob", "", map[string]string{EnvTests: "*-paris"}, Overrides{}, func(c *Config) any { return testIDs(c.Tests) },
			[]string{"weather-paris"}},
		{"tests: flag globs over env", "", map[string]string{EnvTests: "*-paris"}, Overrides{Tests: "json-*, capital-?rance"},
			func(c *Config) any { return testIDs(c.Tests) }, []string{"capital-france", "json-reply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.file
			if path == "" {
				path = writeConfig(t, precedenceConfig)
			}
			c := mustLoad(t, path, tt.flags, envMap(tt.env))
			if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func testIDs(tests []Test) []string {
	ids := make([]string, len(tests))
	for i, t := range tests {
		ids[i] = t.ID
	}
	return ids
}

func TestBadEnvironmentValueNamesTheVariable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, val string
	}{
		{EnvRepeat, "many"},
		{EnvRepeat, "0"},
		{EnvJudgeSamples, "-2"},
		{EnvStrict, "perhaps"},
		{EnvTimeout, "soon"},
		{EnvTimeout, "-5s"},
		{EnvSimTimeScale, "fast"},
		{EnvSimTimeScale, "-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.val, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", "good", "minimal.toml"), Overrides{}, envMap(map[string]string{tt.name: tt.val}))
			wantErr(t, err, fromEnv, 0, tt.name, tt.name+"=", tt.val)
		})
	}
}

func TestBadOverridesNameTheirSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		flags Overrides
		file  string
		field string
		subs  []string
	}{
		{"unknown --models lists the configured ones", nil, Overrides{Models: []string{"a", "zz"}},
			fromFlags, "--models", []string{`"zz"`, "a, b, c"}},
		{"unknown PITWALL_MODELS", map[string]string{EnvModels: "bb"}, Overrides{},
			fromEnv, EnvModels, []string{`"bb"`, "did you mean `b`?"}},
		{"unknown --judge lists the judges", nil, Overrides{Judge: "jc"},
			fromFlags, "--judge", []string{`"jc"`, "ja, jb, or jury, or none"}},
		{"unknown PITWALL_JUDGE", map[string]string{EnvJudge: "jx"}, Overrides{},
			fromEnv, EnvJudge, []string{`"jx"`}},
		{"--tests matching nothing lists ids", nil, Overrides{Tests: "nothing-*"},
			fromFlags, "--tests", []string{"matches no test", "weather-paris"}},
		{"bad --tests glob", nil, Overrides{Tests: "[a-"},
			fromFlags, "--tests", []string{"bad glob"}},
		{"negative --repeat", nil, Overrides{Repeat: -1}, fromFlags, "--repeat", []string{"below 1"}},
		{"negative --judge-samples", nil, Overrides{JudgeSamples: -3}, fromFlags, "--judge-samples", []string{"below 1"}},
		{"negative --timeout", nil, Overrides{Timeout: -time.Second}, fromFlags, "--timeout", []string{"negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeConfig(t, precedenceConfig), tt.flags, envMap(tt.env))
			wantErr(t, err, tt.file, 0, tt.field, tt.subs...)
		})
	}
}

func TestJudgeJuryFlagNeedsTwoJudges(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join("testdata", "good", "minimal.toml"), Overrides{Judge: "jury"}, noEnv)
	wantErr(t, err, fromFlags, 0, "--judge", "two or more judges", "has 0")
}

func TestSplitListTrimsAndDropsRepeats(t *testing.T) {
	t.Parallel()
	got := splitList(" a, b,,a , c ")
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("splitList = %q", got)
	}
}

func ptr[T any](v T) *T { return &v }
