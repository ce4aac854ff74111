package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"pitwall/gpu/chat"
	"pitwall/judge/scoring"

	"github.com/BurntSushi/toml"
)

// DefaultPath is the config file Load reads when given no path.
const DefaultPath = "pitwall.toml"

// meta is what Load remembers of the file for later messages (CheckOffered
// runs after discovery and still names the line of a model).
type meta struct {
	src        *Source
	fileModels []string // models as the file lists them, before --models
}

// Load reads path (DefaultPath when empty), applies defaults < file <
// environment (PITWALL_*, see EnvModels and the other Env* names) <
// overrides, validates, resolves the battery against the config's folder,
// loads the battery and filters it by --tests. getenv is os.Getenv in
// production (nil means os.Getenv) and a map lookup in tests.
//
// Every problem found is returned at once, as Errors.
func Load(path string, ov Overrides, getenv func(string) string) (*Config, error) {
	if path == "" {
		path = DefaultPath
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	data, err := ReadInput(path)
	if err != nil {
		return nil, Errors{readError(path, err)}.Err()
	}
	c, src, errs := decodeConfig(path, data)

	env, envErrs := envOverrides(getenv)
	errs = append(errs, envErrs...)
	errs = append(errs, checkFlags(ov)...)
	if c == nil {
		return nil, errs.Err()
	}
	if c.Ledger.URL != "" {
		c.DB = c.Ledger.URL
	}
	eff := mergeOverrides(env, ov)
	c.meta = &meta{src: src, fileModels: c.Models}
	errs = append(errs, eff.apply(c)...)
	deriveScoring(c)
	errs = append(errs, validate(c)...)
	unifyJudgeModels(c)
	warnUnusedJudges(c)

	if c.Battery != "" {
		tests, warnings, berrs := loadConfigBattery(c, src)
		c.Warnings = append(c.Warnings, warnings...)
		errs = append(errs, berrs...)
		if len(berrs) == 0 {
			c.Tests, berrs = eff.filterTests(tests)
			errs = append(errs, berrs...)
		}
		errs = append(errs, checkCells(c, src)...)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func readError(path string, err error) *Error {
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{File: path, Msg: "config file not found",
			Hint: "pass the config's path (pitwall run path/to/pitwall.toml), or copy one from examples/"}
	}
	if isInputError(err) {
		return &Error{File: path, Msg: "cannot read config: the path " + err.Error(),
			Hint: "a config is a TOML file: pass the path of one"}
	}
	return &Error{File: path, Msg: fmt.Sprintf("cannot read config: %v", err),
		Hint: "check that the path is a readable file"}
}

// defaults is a Config holding every default that does not depend on other
// settings. The file is decoded over it, so a key the file leaves out keeps
// its default and a key the file sets to zero stays zero (and is caught by
// validation rather than silently replaced).
func defaults() *Config {
	return &Config{
		DB: ".pitwall/ledger.db",
		Run: Run{
			Timeout:   300 * time.Second,
			MaxWait:   DefaultMaxWait,
			MaxTokens: 1024,
			Seed:      42,
			Repeat:    1,
			Retries:   2,
			Judging:   scoring.TwoPhase,
			// Fits any honest reply to max_tokens; see client.DefaultMaxReplyBytes.
			MaxReplyBytes: 8 << 20,
		},
		Scoring: Scoring{
			Samples:            1,
			MinScore:           0.5,
			Aggregation:        "mean",
			DisagreementMax:    0.3,
			ReportDisagreement: true,
		},
		Sim: Sim{TimeScale: 1},
	}
}

// decodeConfig parses the TOML, checks its shape and decodes it over the
// defaults. A nil Config means the file could not be decoded at all.
func decodeConfig(path string, data []byte) (*Config, *Source, Errors) {
	if e := nestingError(path, data, "toml"); e != nil {
		return nil, nil, Errors{e}
	}
	text := string(data)
	var generic map[string]any
	if _, err := toml.Decode(text, &generic); err != nil {
		return nil, nil, Errors{tomlError(path, err)}
	}
	src := locateTOML(path, text)
	col := NewCollector(src)
	checkShape(col, generic, reflect.TypeFor[Config](), "toml", "")

	c := defaults()
	if _, err := toml.Decode(text, c); err != nil {
		if len(col.Errs) == 0 {
			col.Errs = append(col.Errs, tomlError(path, err))
		}
		return nil, src, col.Errs
	}
	c.Path = path
	elementDefaults(c, generic)
	return c, src, col.Errs
}

// elementDefaults fills defaults inside arrays of tables, whose elements the
// decoder creates fresh. Presence is read from the generic decoding so that
// an explicit zero (slots = 0) is reported, not replaced.
func elementDefaults(c *Config, generic map[string]any) {
	for i := range c.Servers {
		if !hasKey(generic, "servers", i, "slots") {
			c.Servers[i].Slots = 1
		}
	}
	for i := range c.Scoring.Judges {
		j := &c.Scoring.Judges[i]
		if !hasKey(generic, "scoring", "judges", i, "weight") {
			j.Weight = 1
		}
		if !hasKey(generic, "scoring", "judges", i, "max_tokens") {
			j.MaxTokens = 512
		}
		if j.Template == "" {
			j.Template = scoring.DefaultTemplate
		}
	}
}

// hasKey reports whether a path of keys (string) and indices (int) exists
// in generic decoded data.
func hasKey(v any, path ...any) bool {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = m[k]; !ok {
				return false
			}
		case int:
			rv := reflect.ValueOf(v)
			if rv.Kind() != reflect.Slice || k >= rv.Len() {
				return false
			}
			v = rv.Index(k).Interface()
		}
	}
	return true
}

// warnUnusedJudges says which judge decides when judge mode names more
// than one: the others are not asked unless the user switches to them.
func warnUnusedJudges(c *Config) {
	if c.Scoring.Mode != scoring.ModeJudge || len(c.Scoring.Judges) < 2 {
		return
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s: scoring.mode = \"judge\" with %d judges: %s decides, and the others judge only "+
		"when switched to (the grid's J, or show --judge); for a verdict of them all set mode = \"jury\"",
		c.Path, len(c.Scoring.Judges), c.Scoring.Active))
}

// unifyJudgeModels spells a fleet judge's model as the tested model it is
// (chat.ModelKey): a judge "tiny-b" beside a tested "tiny-b:latest" is one
// model on the server, and placement, which compares the names, must see
// one, or it loads the model twice. A hosted judge (url) is another
// server's model, whatever its name.
func unifyJudgeModels(c *Config) {
	for i := range c.Scoring.Judges {
		j := &c.Scoring.Judges[i]
		if j.URL != "" {
			continue
		}
		for _, m := range c.Models {
			if m != j.Model && chat.ModelKey(m) == chat.ModelKey(j.Model) {
				j.Model = m
				break
			}
		}
	}
}

// DefaultMaxWait is [run] max_wait when the config leaves it out.
const DefaultMaxWait = 5 * time.Minute

// deriveScoring fills the mode and the judge in view from the plan they
// make (scoring.NewPlan decides both, for every reader of the run).
func deriveScoring(c *Config) {
	p := c.Plan()
	c.Scoring.Mode, c.Scoring.Active = p.Mode, p.InView
}

func tomlError(path string, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &Error{File: path, Line: pe.Position.Line, Msg: "TOML syntax: " + pe.Message,
			Hint: "fix the TOML on this line (strings need quotes; tables are [name], arrays of tables [[name]])"}
	}
	return &Error{File: path, Msg: err.Error(), Hint: "fix the TOML"}
}

// BatteryPath is the battery file as Load read it: Battery resolved against
// the config's folder.
func (c *Config) BatteryPath() string {
	if c.Battery == "" || filepath.IsAbs(c.Battery) {
		return c.Battery
	}
	return filepath.Join(filepath.Dir(c.Path), c.Battery)
}

func loadConfigBattery(c *Config, src *Source) ([]Test, []string, Errors) {
	p := c.BatteryPath()
	if _, err := checkInput(p); err != nil {
		e := &Error{File: c.Path, Line: src.Line("battery"), Field: "battery",
			Msg:  fmt.Sprintf("cannot read battery %s: %v", c.Battery, err),
			Hint: "a battery is a .toml, .json, .jsonl, .yaml or .yml file"}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			e.Msg = fmt.Sprintf("battery file %s not found", c.Battery)
			e.Hint = fmt.Sprintf("looked for %s: a battery path is relative to the config's folder", p)
		case isInputError(err):
			e.Msg = fmt.Sprintf("battery %s %v", c.Battery, err)
		}
		return nil, nil, Errors{e}
	}
	tests, warnings, err := loadBatteryFiles(p, c.AllowOutsideFiles)
	return tests, warnings, asErrors(err)
}

// asErrors flattens an error from a loader into Errors.
func asErrors(err error) Errors {
	if err == nil {
		return nil
	}
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var e *Error
	if errors.As(err, &e) {
		return Errors{e}
	}
	return Errors{{Msg: err.Error()}}
}
