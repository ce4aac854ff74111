package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// LoadQualify reads a config for qualifying its judges: an ordinary
// pitwall.toml whose battery is a judge battery (see LoadJudgeBattery). It
// applies defaults, environment and overrides as Load does (--judge picks
// the judges to qualify, --judge-samples the samples), needs no models
// (none is run; models listed are checked as usual), needs a judge to
// qualify (JudgeNames: the judge in view, or every judge of a jury), and
// filters the judge battery by --tests. Tests stays empty: the
// judge battery's tests come back apart.
//
// Every problem found is returned at once, as Errors.
func LoadQualify(path string, ov Overrides, getenv func(string) string) (*Config, []JudgeTest, error) {
	if path == "" {
		path = DefaultPath
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	data, err := ReadInput(path)
	if err != nil {
		return nil, nil, Errors{readError(path, err)}.Err()
	}
	c, src, errs := decodeConfig(path, data)
	env, envErrs := envOverrides(getenv)
	errs = append(errs, envErrs...)
	errs = append(errs, checkFlags(ov)...)
	if c == nil {
		return nil, nil, errs.Err()
	}
	eff := mergeOverrides(env, ov)
	c.meta = &meta{src: src, fileModels: c.Models}
	errs = append(errs, eff.apply(c)...)
	deriveScoring(c)
	for _, e := range validate(c) {
		// No model is run: a config without models is fine here.
		if len(c.meta.fileModels) == 0 && e.Field == "models" {
			continue
		}
		errs = append(errs, e)
	}
	if len(c.JudgeNames()) == 0 {
		errs = append(errs, &Error{File: path, Line: src.Line("scoring"), Field: "scoring.judges",
			Msg:  "no judge to qualify",
			Hint: "add a [[scoring.judges]] table (and do not pass --judge none)"})
	}

	var tests []JudgeTest
	if c.Battery != "" {
		var (
			berrs    Errors
			warnings []string
		)
		tests, warnings, berrs = loadConfigJudgeBattery(c, src, eff)
		errs = append(errs, berrs...)
		c.Warnings = append(c.Warnings, warnings...)
	}
	if err := errs.Err(); err != nil {
		return nil, nil, err
	}
	return c, tests, nil
}

func loadConfigJudgeBattery(c *Config, src *Source, eff *effective) ([]JudgeTest, []string, Errors) {
	p := c.BatteryPath()
	if _, err := os.Stat(p); err != nil {
		return nil, nil, Errors{{
			File: c.Path, Line: src.Line("battery"), Field: "battery",
			Msg:  fmt.Sprintf("judge battery file %s not found", c.Battery),
			Hint: fmt.Sprintf("looked for %s: a battery path is relative to the config's folder", p),
		}}
	}
	jts, warnings, err := loadJudgeBatteryFiles(p, c.AllowOutsideFiles)
	if err != nil {
		return nil, nil, asErrors(err)
	}
	plain := make([]Test, len(jts))
	for i := range jts {
		plain[i] = jts[i].Test
	}
	kept, errs := eff.filterTests(plain)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	ids := make(map[string]bool, len(kept))
	for _, t := range kept {
		ids[t.ID] = true
	}
	out := jts[:0:0]
	for _, jt := range jts {
		if ids[jt.ID] {
			out = append(out, jt)
		}
	}
	return out, warnings, nil
}

// IsQualifyConfig reports whether the config at path names a judge battery
// (a battery whose tests carry expect), so that a command given one to run
// or validate can say so, or load it with LoadQualify, instead of reporting
// every test's candidate and expect as unknown keys. Any problem reading
// either file is false: Load will report it.
//
// A promptfoo judge-competence config (.yaml) is both: a battery whose
// models are the judges under test, and a judge battery. A config that
// lists models runs it; one that lists none qualifies its judges on it.
func IsQualifyConfig(path string) bool {
	ok, _ := CheckQualifyConfig(path)
	return ok
}

// CheckQualifyConfig is IsQualifyConfig that also says why a file could
// not be looked at: the config or its battery is not a regular file, too
// large or nested too deep (an *Error naming the file). A file that is
// missing or does not decode is false with no error, for Load to report.
// Both files are read through ReadDocument, as every loader reads them:
// this look comes before any other check, so it must be as bounded.
func CheckQualifyConfig(path string) (bool, error) {
	var head struct {
		Battery string `toml:"battery"`
		Models  []any  `toml:"models"`
	}
	data, err := ReadDocument(path, "toml")
	if err != nil {
		return false, refusal(path, "config", "a config is a TOML file: pass the path of one", err)
	}
	if _, err := toml.Decode(string(data), &head); err != nil || head.Battery == "" {
		return false, nil
	}
	c := &Config{Path: path, Battery: head.Battery}
	ext := strings.ToLower(filepath.Ext(c.Battery))
	syntax := map[string]string{".toml": "toml", ".json": "json"}[ext]
	if data, err = ReadDocument(c.BatteryPath(), cmp.Or(syntax, "brackets")); err != nil {
		return false, refusal(c.BatteryPath(), "battery", "check the battery path", err)
	}
	var top any
	switch ext {
	case ".toml":
		var m map[string]any
		if _, err := toml.Decode(string(data), &m); err != nil {
			return false, nil
		}
		top = m
	case ".json":
		if json.Unmarshal(data, &top) != nil {
			return false, nil
		}
	default:
		f := judgeFormatFor(c.Battery)
		if f == nil || f.IsJudge == nil {
			return false, nil
		}
		if err := f.checkNesting(File{Path: c.BatteryPath(), Data: data}); err != nil {
			return false, Errors{readFailure(c.BatteryPath(), "battery", "", err)}.Err()
		}
		return len(head.Models) == 0 && f.IsJudge(data), nil
	}
	tests := top
	if m, ok := top.(map[string]any); ok {
		tests = m["tests"]
	}
	for _, t := range asList(tests) {
		if m, ok := t.(map[string]any); ok && m["expect"] != nil {
			return true, nil
		}
	}
	return false, nil
}

// refusal is err, worded as the loaders word it, when the file was refused
// for what it is; nil when it is missing or unreadable, which the loaders
// report in their own words.
func refusal(path, what, hint string, err error) error {
	if !isRefusal(err) {
		return nil
	}
	return Errors{readFailure(path, what, hint, err)}.Err()
}
