package config

import (
	"path/filepath"
	"pitwall/judge/scoring"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestLoadFillsDefaultsForWhatTheFileLeavesOut(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, filepath.Join("testdata", "good", "minimal.toml"), Overrides{}, noEnv)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"run.timeout", c.Run.Timeout, 300 * time.Second},
		{"run.max_tokens", c.Run.MaxTokens, 1024},
		{"run.temperature", c.Run.Temperature, 0.0},
		{"run.seed", c.Run.Seed, 42},
		{"run.repeat", c.Run.Repeat, 1},
		{"run.retries", c.Run.Retries, 2},
		{"run.judging", c.Run.Judging, scoring.TwoPhase},
		{"run.strict", c.Run.Strict, false},
		{"servers[0].slots", c.Servers[0].Slots, 1},
		{"scoring.samples", c.Scoring.Samples, 1},
		{"scoring.min_score", c.Scoring.MinScore, 0.5},
		{"scoring.aggregation", c.Scoring.Aggregation, "mean"},
		{"scoring.disagreement_threshold", c.Scoring.DisagreementMax, 0.3},
		{"scoring.report_disagreement", c.Scoring.ReportDisagreement, true},
		{"scoring.mode without judges", c.Scoring.Mode, scoring.ModeDeterministic},
		{"db relative to the working directory", c.DB, ".pitwall/ledger.db"},
		{"sim.time_scale", c.SimTimeScale(), 1.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestLoadKeepsWhatTheFileSays(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, filepath.Join("testdata", "good", "pitwall.toml"), Overrides{}, noEnv)
	judgeSmall, _ := c.Judge("small")
	judgeHosted, _ := c.Judge("hosted")
	gpu0, _ := c.Server("gpu0")
	gpu1, _ := c.Server("gpu1")
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"name", c.Name, "tool-competence"},
		{"models", c.Models, []string{"qwen3-8b", "granite-4.0-micro", "gemma-3-12b"}},
		{"run.timeout", c.Run.Timeout, 90 * time.Second},
		{"run.max_tokens", c.Run.MaxTokens, 2048},
		{"run.temperature", c.Run.Temperature, 0.2},
		{"run.seed", c.Run.Seed, 7},
		{"run.repeat", c.Run.Repeat, 2},
		{"run.retries", c.Run.Retries, 3},
		{"run.judging", c.Run.Judging, scoring.Pipelined},
		{"explicit slots", gpu0.Slots, 2},
		{"default slots beside explicit ones", gpu1.Slots, 1},
		{"gpus", gpu0.GPUs, []int{0}},
		{"api_key_env", gpu1.APIKeyEnv, "GPU1_KEY"},
		{"sim backend", c.Servers[2].Sim.Backend, "ollama"},
		{"scoring.samples", c.Scoring.Samples, 3},
		{"scoring.aggregation", c.Scoring.Aggregation, "median"},
		{"report_disagreement can be turned off", c.Scoring.ReportDisagreement, false},
		{"mode with two judges", c.Scoring.Mode, scoring.ModeJury},
		{"jury in view", c.Scoring.Active, scoring.JuryName},
		{"judge weight", judgeSmall.Weight, 2.0},
		{"default judge weight", judgeHosted.Weight, 1.0},
		{"default judge template", judgeHosted.Template, "rubric-v2"},
		{"default judge max_tokens", judgeHosted.MaxTokens, 512},
		{"jury judges", c.JudgeNames(), []string{"small", "hosted"}},
		{"sim.time_scale", c.SimTimeScale(), 0.01},
		{"battery as written", c.Battery, "batteries/tools.toml"},
		{"battery resolved against the config", c.BatteryPath(), filepath.Join("testdata", "good", "batteries", "tools.toml")},
		{"tests loaded", len(c.Tests), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestScoringModeFollowsTheJudges(t *testing.T) {
	t.Parallel()
	const head = `
battery = "tools.toml"
models = ["m1"]
[[servers]]
name = "s"
kind = "sim"
models = ["m1", "j1", "j2"]
`
	judge := func(name string) string {
		return "[[scoring.judges]]\nname = \"" + name + "\"\nmodel = \"" + name + "\"\nserver = \"s\"\n"
	}
	tests := []struct {
		name       string
		body       string
		ov         Overrides
		wantMode   scoring.Mode
		wantActive string
		wantJudges []string
	}{
		{"no judges: deterministic", head, Overrides{}, scoring.ModeDeterministic, "", nil},
		{"one judge: judge", head + judge("j1"), Overrides{}, scoring.ModeJudge, "j1", []string{"j1"}},
		{"two judges: jury", head + judge("j1") + judge("j2"), Overrides{}, scoring.ModeJury, scoring.JuryName, []string{"j1", "j2"}},
		{"explicit judge mode with two judges views the first", head + "[scoring]\nmode = \"judge\"\n" + judge("j1") + judge("j2"),
			Overrides{}, scoring.ModeJudge, "j1", []string{"j1"}},
		{"explicit active", head + "[scoring]\nmode = \"judge\"\nactive = \"j2\"\n" + judge("j1") + judge("j2"),
			Overrides{}, scoring.ModeJudge, "j2", []string{"j2"}},
		{"--judge picks one of a jury", head + judge("j1") + judge("j2"), Overrides{Judge: "j2"}, scoring.ModeJudge, "j2", []string{"j2"}},
		{"--judge none turns judging off", head + judge("j1") + judge("j2"), Overrides{Judge: "none"}, scoring.ModeDeterministic, "", nil},
		{"--judge jury overrides an explicit judge mode", head + "[scoring]\nmode = \"judge\"\n" + judge("j1") + judge("j2"),
			Overrides{Judge: "jury"}, scoring.ModeJury, scoring.JuryName, []string{"j1", "j2"}},
		{"--judge overrides an explicit jury", head + "[scoring]\nmode = \"jury\"\n" + judge("j1") + judge("j2"),
			Overrides{Judge: "j1"}, scoring.ModeJudge, "j1", []string{"j1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, writeConfig(t, tt.body), tt.ov, noEnv)
			if c.Scoring.Mode != tt.wantMode || c.Scoring.Active != tt.wantActive {
				t.Errorf("mode %q active %q, want %q %q", c.Scoring.Mode, c.Scoring.Active, tt.wantMode, tt.wantActive)
			}
			if got := c.JudgeNames(); !slices.Equal(got, tt.wantJudges) {
				t.Errorf("JudgeNames() = %v, want %v", got, tt.wantJudges)
			}
			if len(c.Scoring.Judges) != len(c.allJudgeNames()) || (tt.wantJudges != nil && len(c.Scoring.Judges) == 0) {
				t.Errorf("judges were dropped from Scoring.Judges: %v", c.allJudgeNames())
			}
		})
	}
}

func TestModelSpecGivesSimulatedModels(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, filepath.Join("testdata", "good", "pitwall.toml"), Overrides{}, noEnv)
	tests := []struct {
		name      string
		model     string
		wantOK    bool
		wantSkill float64
		wantTTFT  time.Duration
	}{
		{"tuned by [[sim.models]]", "gemma-3-12b", true, 0.9, 150 * time.Millisecond},
		{"offered by a sim server without an entry takes defaults", "judge-small", true, 0, 0},
		{"a real server's model is not simulated", "qwen3-8b", false, 0, 0},
		{"unknown", "nope", false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, ok := c.ModelSpec(tt.model)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if spec.Name != tt.model || spec.Skill != tt.wantSkill || spec.TTFT != tt.wantTTFT {
				t.Errorf("spec = %+v", spec)
			}
		})
	}
}

func TestSimTimeScaleOfAHandMadeConfigIsRealTime(t *testing.T) {
	t.Parallel()
	if got := (&Config{}).SimTimeScale(); got != 1 {
		t.Errorf("SimTimeScale() = %v, want 1", got)
	}
}
