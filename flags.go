package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"pitwall/config"
)

// commonFlags are the flags every command that loads a config takes.
type commonFlags struct {
	headless     bool
	ascii        bool
	models       string
	tests        string
	judge        string
	judgeSamples int
	repeat       int
	db           string
	strict       bool
	timeout      time.Duration
	timeScale    float64
	judgeRefresh bool
}

// register puts the common flags on fs: all of them, or only the named ones
// (a command's --help lists just what it reads).
func (c *commonFlags) register(fs *flag.FlagSet, only ...string) {
	all := flag.NewFlagSet("", flag.ContinueOnError)
	c.define(all)
	all.VisitAll(func(f *flag.Flag) {
		if len(only) == 0 || slices.Contains(only, f.Name) {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
}

func (c *commonFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&c.headless, "headless", false, "plain progress lines and a final grid instead of the live grid")
	fs.BoolVar(&c.ascii, "ascii", false, "draw the grid with ASCII glyphs")
	fs.StringVar(&c.models, "models", "", "run only these models (comma-separated)")
	fs.StringVar(&c.tests, "tests", "", "run only tests whose id matches these globs (comma-separated)")
	fs.StringVar(&c.judge, "judge", "", "judge in view: a judge name, \"jury\", or \"none\" for checks only")
	fs.IntVar(&c.judgeSamples, "judge-samples", 0, "votes per judge per cell")
	fs.IntVar(&c.repeat, "repeat", 0, "consistency runs per cell")
	fs.StringVar(&c.db, "db", "", "ledger path (default .pitwall/ledger.db)")
	fs.BoolVar(&c.strict, "strict", false, "count WARN verdicts as failures for the exit code")
	fs.Var(secondsOrDuration{&c.timeout}, "timeout", "per-request timeout, counted from dispatch (e.g. 90s, 5m; a bare number is seconds)")
	fs.Float64Var(&c.timeScale, "time-scale", 0, "simulator time scale (0.01 makes a 30s load take 0.3s)")
	fs.BoolVar(&c.judgeRefresh, "judge-refresh", false, "ignore cached verdicts and judge again")
}

func (c *commonFlags) overrides(fs *flag.FlagSet) config.Overrides {
	ov := config.Overrides{Tests: c.tests, Judge: c.judge, JudgeSamples: c.judgeSamples, Repeat: c.repeat,
		DB: c.db, Timeout: c.timeout, TimeScale: c.timeScale}
	if c.models != "" {
		for _, m := range strings.Split(c.models, ",") {
			if m = strings.TrimSpace(m); m != "" {
				ov.Models = append(ov.Models, m)
			}
		}
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "strict" {
			s := c.strict
			ov.Strict = &s
		}
	})
	return ov
}

// parseArgs parses flags that may come before or after the positional
// arguments ("pitwall run demo.toml --headless" works as well as the
// reverse) and returns the positionals.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlagSet makes a flag set whose errors and help go to stderr with the
// command's usage line.
func newFlagSet(name, usageLine, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n\n%s\n\nFlags:\n", usageLine, about)
		fs.PrintDefaults()
	}
	return fs
}

// configPath is the config argument or the default.
func configPath(pos []string) string {
	if len(pos) > 0 {
		return pos[0]
	}
	return "pitwall.toml"
}

// parseConfig parses a command's flags (cf registered on fs) and loads its
// config. When ok is false the command returns code: 0 after --help, 2 on a
// bad flag or config (the message is printed).
func parseConfig(fs *flag.FlagSet, cf *commonFlags, args []string, stderr io.Writer) (cfg *config.Config, code int, ok bool) {
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, 0, false
	} else if err != nil {
		return nil, 2, false
	}
	if len(pos) > 1 {
		fmt.Fprintf(fs.Output(), "pitwall %s: one config at a time, not %d (%s)\n", fs.Name(), len(pos), strings.Join(pos, " "))
		return nil, 2, false
	}
	cfg, err = config.Load(configPath(pos), cf.overrides(fs), os.Getenv)
	if err != nil {
		return nil, failf(stderr, err), false
	}
	// The ledger keeps where the config came from, for `show` from
	// anywhere later.
	if abs, err := filepath.Abs(cfg.Path); err == nil {
		cfg.Path = abs
	}
	return cfg, 0, true
}

// secondsOrDuration is a duration flag that also takes a bare number of
// seconds, as PITWALL_TIMEOUT does.
type secondsOrDuration struct{ d *time.Duration }

func (s secondsOrDuration) String() string {
	if s.d == nil || *s.d == 0 {
		return ""
	}
	return s.d.String()
}

func (s secondsOrDuration) Set(v string) error {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		*s.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a duration: write e.g. 90s or 5m", v)
	}
	*s.d = d
	return nil
}
