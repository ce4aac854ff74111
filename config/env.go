package config

import (
	"fmt"
	"math"
	"path"
	"pitwall/judge/scoring"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Overrides are command-line flags; nil/zero means "not given".
type Overrides struct {
	Models       []string      // --models a,b
	Tests        string        // --tests GLOB (matches test ids; comma-separated globs allowed)
	Judge        string        // --judge NAME|none  (none => scoring mode deterministic)
	JudgeSamples int           // --judge-samples N
	Repeat       int           // --repeat N
	DB           string        // --db PATH
	Strict       *bool         // --strict
	Reuse        bool          // --reuse (reuse_inference)
	Timeout      time.Duration // --timeout (per request)
	MaxWait      time.Duration // --max-wait; negative means 0 (wait for ever)
	TimeScale    *float64      // --time-scale (sim time scale; 0 is instant)
}

// Where an override came from, as an Error's File.
const (
	fromFlags = "command line"
	fromEnv   = "environment"
)

// The environment variables Load reads. Each overrides the config file and
// is overridden by the matching flag:
//
//	PITWALL_MODELS          comma-separated subset of the config's models (--models)
//	PITWALL_TESTS           comma-separated globs over test ids (--tests)
//	PITWALL_JUDGE           a judge's name, "jury" for all of them, or "none" for checks only (--judge)
//	PITWALL_JUDGE_SAMPLES   votes per judge per cell, >= 1 (--judge-samples)
//	PITWALL_REPEAT          runs per cell, >= 1 (--repeat)
//	PITWALL_DB              ledger path (--db)
//	PITWALL_STRICT          true/false/1/0: WARN fails the run (--strict)
//	PITWALL_TIMEOUT         per-request timeout: "90s", "2m", or bare seconds (--timeout)
//	PITWALL_MAX_WAIT        how long work waits for a server that is down before it ends unavailable: "5m", or 0 for ever (--max-wait)
//	PITWALL_SIM_TIME_SCALE  simulator time scale, >= 0; 0 is instant (--time-scale)
//
// An empty variable counts as unset.
const (
	EnvModels       = "PITWALL_MODELS"
	EnvTests        = "PITWALL_TESTS"
	EnvJudge        = "PITWALL_JUDGE"
	EnvJudgeSamples = "PITWALL_JUDGE_SAMPLES"
	EnvRepeat       = "PITWALL_REPEAT"
	EnvDB           = "PITWALL_DB"
	EnvStrict       = "PITWALL_STRICT"
	EnvTimeout      = "PITWALL_TIMEOUT"
	EnvMaxWait      = "PITWALL_MAX_WAIT"
	EnvSimTimeScale = "PITWALL_SIM_TIME_SCALE"
)

// envOverrides reads the PITWALL_* variables into Overrides; a value that
// does not parse is an error naming the variable.
func envOverrides(getenv func(string) string) (Overrides, Errors) {
	var ov Overrides
	var errs Errors
	bad := func(name, val, want string) {
		errs = append(errs, &Error{File: fromEnv, Field: name,
			Msg:  fmt.Sprintf("%s=%q is not %s", name, val, want),
			Hint: fmt.Sprintf("set %s to %s, or unset it", name, want)})
	}
	ov.Models = splitList(getenv(EnvModels))
	ov.Tests = strings.TrimSpace(getenv(EnvTests))
	ov.Judge = strings.TrimSpace(getenv(EnvJudge))
	ov.DB = strings.TrimSpace(getenv(EnvDB))
	if v := strings.TrimSpace(getenv(EnvJudgeSamples)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxSamples {
			bad(EnvJudgeSamples, v, fmt.Sprintf("a whole number from 1 to %d", maxSamples))
		} else {
			ov.JudgeSamples = n
		}
	}
	if v := strings.TrimSpace(getenv(EnvRepeat)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRepeat {
			bad(EnvRepeat, v, fmt.Sprintf("a whole number from 1 to %d", maxRepeat))
		} else {
			ov.Repeat = n
		}
	}
	if v := strings.TrimSpace(getenv(EnvStrict)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(EnvStrict, v, "true or false")
		} else {
			ov.Strict = &b
		}
	}
	if v := strings.TrimSpace(getenv(EnvTimeout)); v != "" {
		d, err := parseTimeout(v)
		if err != nil || d <= 0 {
			bad(EnvTimeout, v, `a positive duration such as "90s" or "2m"`)
		} else {
			ov.Timeout = d
		}
	}
	if v := strings.TrimSpace(getenv(EnvMaxWait)); v != "" {
		d, err := parseTimeout(v)
		switch {
		case err != nil || d < 0:
			bad(EnvMaxWait, v, `a duration such as "5m", or 0 to wait for ever`)
		case d == 0:
			ov.MaxWait = -1
		default:
			ov.MaxWait = d
		}
	}
	if v := strings.TrimSpace(getenv(EnvSimTimeScale)); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !validScale(f) {
			bad(EnvSimTimeScale, v, "a number >= 0 (0.01 makes a 30s load take 0.3s; 0 is instant)")
		} else {
			ov.TimeScale = &f
		}
	}
	return ov, errs
}

// validScale reports whether f is a simulator time scale: finite (not NaN),
// 0 or more.
func validScale(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }

// parseTimeout takes a Go duration, or bare seconds, which is what people
// type into an environment variable.
func parseTimeout(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(v)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// checkFlags rejects flag values that no config could accept.
func checkFlags(ov Overrides) Errors {
	var errs Errors
	bad := func(flag, msg, hint string) {
		errs = append(errs, &Error{File: fromFlags, Field: flag, Msg: msg, Hint: hint})
	}
	if ov.Repeat < 0 {
		bad("--repeat", fmt.Sprintf("--repeat %d is below 1", ov.Repeat), "give --repeat 1 or more")
	}
	if ov.Repeat > maxRepeat {
		bad("--repeat", fmt.Sprintf("--repeat %d is above the most pitwall takes, %d", ov.Repeat, maxRepeat),
			"every repeat is a row of cells held in memory; give --repeat 1 to 10000")
	}
	if ov.JudgeSamples < 0 {
		bad("--judge-samples", fmt.Sprintf("--judge-samples %d is below 1", ov.JudgeSamples), "give --judge-samples 1 or more")
	}
	if ov.JudgeSamples > maxSamples {
		bad("--judge-samples", fmt.Sprintf("--judge-samples %d is above the most pitwall takes, %d", ov.JudgeSamples, maxSamples),
			"each sample is a judge request per cell; give --judge-samples 1 to 100")
	}
	if ov.Timeout < 0 {
		bad("--timeout", fmt.Sprintf("--timeout %s is negative", ov.Timeout), `give a positive duration such as --timeout 90s`)
	}
	if ov.TimeScale != nil && !validScale(*ov.TimeScale) {
		bad("--time-scale", fmt.Sprintf("--time-scale %g is not a time scale", *ov.TimeScale), "give a number >= 0: 1 is real time, 0.01 makes a 30s load take 0.3s, 0 is instant")
	}
	return errs
}

// effective is the overrides after flags have been laid over the
// environment, with where each came from for error messages.
type effective struct {
	Overrides
	from map[string]string // field name -> "--models" or "PITWALL_MODELS"
}

// origin returns the File and Field naming where an override came from.
func (e *effective) origin(field string) (file, name string) {
	name = e.from[field]
	if strings.HasPrefix(name, "--") {
		return fromFlags, name
	}
	return fromEnv, name
}

func mergeOverrides(env, flags Overrides) *effective {
	e := &effective{from: map[string]string{}}
	pick := func(field, flag, envName string, flagSet, envSet bool, setFlag, setEnv func()) {
		switch {
		case flagSet:
			setFlag()
			e.from[field] = flag
		case envSet:
			setEnv()
			e.from[field] = envName
		}
	}
	o := &e.Overrides
	pick("models", "--models", EnvModels, len(flags.Models) > 0, len(env.Models) > 0,
		func() { o.Models = splitList(strings.Join(flags.Models, ",")) }, func() { o.Models = env.Models })
	pick("tests", "--tests", EnvTests, flags.Tests != "", env.Tests != "",
		func() { o.Tests = flags.Tests }, func() { o.Tests = env.Tests })
	pick("judge", "--judge", EnvJudge, flags.Judge != "", env.Judge != "",
		func() { o.Judge = flags.Judge }, func() { o.Judge = env.Judge })
	pick("judge_samples", "--judge-samples", EnvJudgeSamples, flags.JudgeSamples > 0, env.JudgeSamples > 0,
		func() { o.JudgeSamples = flags.JudgeSamples }, func() { o.JudgeSamples = env.JudgeSamples })
	pick("repeat", "--repeat", EnvRepeat, flags.Repeat > 0, env.Repeat > 0,
		func() { o.Repeat = flags.Repeat }, func() { o.Repeat = env.Repeat })
	pick("db", "--db", EnvDB, flags.DB != "", env.DB != "",
		func() { o.DB = flags.DB }, func() { o.DB = env.DB })
	pick("strict", "--strict", EnvStrict, flags.Strict != nil, env.Strict != nil,
		func() { o.Strict = flags.Strict }, func() { o.Strict = env.Strict })
	o.Reuse = flags.Reuse
	pick("timeout", "--timeout", EnvTimeout, flags.Timeout > 0, env.Timeout > 0,
		func() { o.Timeout = flags.Timeout }, func() { o.Timeout = env.Timeout })
	pick("max_wait", "--max-wait", EnvMaxWait, flags.MaxWait != 0, env.MaxWait != 0,
		func() { o.MaxWait = flags.MaxWait }, func() { o.MaxWait = env.MaxWait })
	pick("time_scale", "--time-scale", EnvSimTimeScale, flags.TimeScale != nil, env.TimeScale != nil,
		func() { o.TimeScale = flags.TimeScale }, func() { o.TimeScale = env.TimeScale })
	return e
}

// apply lays the overrides over the decoded file.
func (e *effective) apply(c *Config) Errors {
	var errs Errors
	if e.Models != nil {
		var keep []string
		for _, m := range e.Models {
			if slices.Contains(c.Models, m) {
				keep = append(keep, m)
				continue
			}
			file, name := e.origin("models")
			hint := "the configured models are: " + strings.Join(c.Models, ", ")
			if len(c.Models) == 0 {
				hint = "the config lists no models; add them to models = [...]"
			} else if n := nearest(m, c.Models); n != "" {
				hint = fmt.Sprintf("did you mean `%s`? ", n) + hint
			}
			errs = append(errs, &Error{File: file, Field: name,
				Msg: fmt.Sprintf("model %q is not in %s's models", m, c.Path), Hint: hint})
		}
		c.Models = keep
	}
	if e.Judge != "" {
		file, name := e.origin("judge")
		if e.Judge == "none" {
			c.Scoring.Mode = scoring.ModeDeterministic
			c.Scoring.Active = ""
		} else if e.Judge == scoring.JuryName {
			if n := len(c.Scoring.Judges); n < 2 {
				errs = append(errs, &Error{File: file, Field: name,
					Msg:  fmt.Sprintf("a jury needs two or more judges; %s has %d", c.Path, n),
					Hint: "add [[scoring.judges]] tables, or name one judge"})
			} else {
				c.Scoring.Mode = scoring.ModeJury
				c.Scoring.Active = scoring.JuryName
			}
		} else if slices.Contains(c.allJudgeNames(), e.Judge) {
			c.Scoring.Mode = scoring.ModeJudge
			c.Scoring.Active = e.Judge
		} else {
			hint := "no judges are configured; add a [[scoring.judges]] table, or use none"
			if names := c.allJudgeNames(); len(names) > 0 {
				hint = "the judges are: " + strings.Join(names, ", ") + ", or jury, or none"
				if n := nearest(e.Judge, names); n != "" {
					hint = fmt.Sprintf("did you mean `%s`? ", n) + hint
				}
			}
			errs = append(errs, &Error{File: file, Field: name,
				Msg: fmt.Sprintf("no judge named %q in %s", e.Judge, c.Path), Hint: hint})
		}
	}
	// An override past its bound was refused by checkFlags or
	// envOverrides, with its own name; it is not laid over the file, where
	// validate would report it a second time as the file's.
	if e.JudgeSamples > 0 && e.JudgeSamples <= maxSamples {
		c.Scoring.Samples = e.JudgeSamples
	}
	if e.Repeat > 0 && e.Repeat <= maxRepeat {
		c.Run.Repeat = e.Repeat
	}
	if e.DB != "" {
		c.DB = e.DB
	}
	if e.Strict != nil {
		c.Run.Strict = *e.Strict
	}
	if e.Reuse {
		c.Run.ReuseInference = true
	}
	if e.MaxWait != 0 {
		c.Run.MaxWait = max(e.MaxWait, 0)
	}
	if e.Timeout > 0 {
		c.Run.Timeout = e.Timeout
	}
	if e.TimeScale != nil {
		c.Sim.TimeScale = *e.TimeScale
	}
	return errs
}

// filterTests keeps the tests whose id matches any of the --tests globs
// (path.Match syntax: * ? [a-z]).
func (e *effective) filterTests(tests []Test) ([]Test, Errors) {
	globs := splitList(e.Tests)
	if len(globs) == 0 {
		return tests, nil
	}
	file, name := e.origin("tests")
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, Errors{{File: file, Field: name, Msg: fmt.Sprintf("bad glob %q: %v", g, err),
				Hint: "globs use * ? and [a-z]; separate several with commas"}}
		}
	}
	var keep []Test
	for _, t := range tests {
		for _, g := range globs {
			if ok, _ := path.Match(g, t.ID); ok {
				keep = append(keep, t)
				break
			}
		}
	}
	if len(keep) == 0 {
		ids := make([]string, 0, 8)
		for _, t := range tests[:min(len(tests), 8)] {
			ids = append(ids, t.ID)
		}
		more := ""
		if len(tests) > len(ids) {
			more = fmt.Sprintf(" and %d more", len(tests)-len(ids))
		}
		return nil, Errors{{File: file, Field: name, Msg: fmt.Sprintf("%q matches no test id", e.Tests),
			Hint: "test ids are: " + strings.Join(ids, ", ") + more}}
	}
	return keep, nil
}
