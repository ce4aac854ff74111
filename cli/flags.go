package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"pitwall/config"
	"pitwall/internal/redact"
	"pitwall/internal/textutil"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
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
	reuse        bool
	timeout      time.Duration
	timeScale    *float64       // nil: not given (0 is instant)
	maxWait      *time.Duration // nil: not given
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
	fs.Var(atLeastOne{&c.judgeSamples, "votes per judge per cell"}, "judge-samples", "`N` votes per judge per cell")
	fs.Var(atLeastOne{&c.repeat, "runs per cell"}, "repeat", "`N` consistency runs per cell")
	fs.StringVar(&c.db, "db", "", "ledger path (default .pitwall/ledger.db)")
	fs.BoolVar(&c.strict, "strict", false, "count WARN verdicts as failures for the exit code")
	fs.BoolVar(&c.reuse, "reuse", false, "take a cell's output from the ledger when the same request already completed at temperature 0")
	fs.Var(nonNegative{secondsOrDuration{&c.timeout}}, "timeout", "per-request timeout, counted from dispatch (e.g. 90s, 5m; a bare number is seconds)")
	fs.Func("time-scale", "simulator time scale: 1 real time, 0.01 makes a 30s load take 0.3s, 0 instant", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q is not a time scale: give a number >= 0", v)
		}
		c.timeScale = &f
		return nil
	})
	fs.Func("max-wait", "how long work waits for a server that is down before it ends unavailable (default 5m; 0 waits for ever)", func(v string) error {
		var d time.Duration
		if err := (secondsOrDuration{&d}).Set(v); err != nil {
			return err
		}
		if d < 0 {
			return fmt.Errorf("%q is negative: give a duration such as 5m, or 0 to wait for ever", v)
		}
		c.maxWait = &d
		return nil
	})
	fs.BoolVar(&c.judgeRefresh, "judge-refresh", false, "ignore cached verdicts and judge again")
}

func (c *commonFlags) overrides(fs *flag.FlagSet) config.Overrides {
	ov := config.Overrides{Tests: c.tests, Judge: c.judge, JudgeSamples: c.judgeSamples, Repeat: c.repeat,
		DB: c.db, Timeout: c.timeout, TimeScale: c.timeScale, MaxWait: c.maxWaitOverride(), Reuse: c.reuse}
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
//
// --help prints the command's whole usage. A bad flag prints the usage
// line and then the error, with the nearest flag when it looks like a
// typo: the error is the last line, not scrolled away under every flag.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	out, usage := fs.Output(), fs.Usage
	var discard bytes.Buffer
	fs.SetOutput(&discard) // the flag package's own message and usage
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			fs.SetOutput(out)
			if errors.Is(err, flag.ErrHelp) {
				usage()
			} else {
				flagError(fs, usage, err)
			}
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

// flagError prints the command's usage line, a pointer to --help, and err
// (with "did you mean" for an unknown flag near a known one), last.
func flagError(fs *flag.FlagSet, usage func(), err error) {
	out := fs.Output()
	var full bytes.Buffer
	fs.SetOutput(&full)
	usage()
	fs.SetOutput(out)
	if line, _, _ := strings.Cut(full.String(), "\n"); line != "" {
		fmt.Fprintf(out, "%s\n(pitwall %s --help lists the flags)\n", line, fs.Name())
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		msg = "unknown flag " + dashed(name)
		if near := nearestFlag(fs, name); near != "" {
			msg += "; did you mean " + dashed(near) + "?"
		}
	} else if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		// invalid value "0" for flag -repeat: why → --repeat "0": why
		if v, after, ok := strings.Cut(rest, " for flag -"); ok {
			if name, why, ok := strings.Cut(after, ": "); ok {
				msg = dashed(name) + " " + v + ": " + why
			}
		}
	}
	fmt.Fprintf(out, "pitwall %s: %s\n", fs.Name(), msg)
}

// dashed is a flag's name as the help writes it: -o, --headless.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearestFlag is the flag of fs (hidden aliases included) that a typo of
// name most likely meant, or "".
func nearestFlag(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	if near := textutil.Nearest(name, names, limit); near != "" {
		return near
	}
	// The start of one flag alone: --head for --headless.
	var by []string
	for _, n := range names {
		if len(name) >= 3 && strings.HasPrefix(n, name) {
			by = append(by, n)
		}
	}
	if len(by) == 1 {
		return by[0]
	}
	return ""
}

// newFlagSet makes a flag set whose errors and help go to stderr with the
// command's usage line. A flag registered as an alias is left out of the
// help: it is another name of a flag the help lists.
func newFlagSet(name, usageLine, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n", usageLine, about)
		shown := flag.NewFlagSet(name, flag.ContinueOnError)
		shown.SetOutput(fs.Output())
		fs.VisitAll(func(f *flag.Flag) {
			if _, hidden := f.Value.(alias); hidden {
				return
			}
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		})
		shown.PrintDefaults()
	}
	return fs
}

// alias is another name of a flag, left out of --help.
type alias struct{ flag.Value }

// atLeastOne is a count flag that, when given, must be 1 or more: a 0 the
// user typed is not "the default" (--repeat 0 would run nothing).
type atLeastOne struct {
	n    *int
	what string
}

func (a atLeastOne) String() string {
	if a.n == nil || *a.n == 0 {
		return ""
	}
	return strconv.Itoa(*a.n)
}

func (a atLeastOne) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return fmt.Errorf("give a whole number of %s, 1 or more", a.what)
	}
	*a.n = n
	return nil
}

// atLeastZero is a count flag that refuses a negative number.
type atLeastZero struct {
	n    *int
	what string
}

func (a atLeastZero) String() string {
	if a.n == nil {
		return ""
	}
	return strconv.Itoa(*a.n)
}

func (a atLeastZero) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return fmt.Errorf("give a whole number of %s", a.what)
	}
	*a.n = n
	return nil
}

// nonNegative is a duration flag that refuses a negative duration.
type nonNegative struct{ secondsOrDuration }

func (n nonNegative) Set(v string) error {
	if err := n.secondsOrDuration.Set(v); err != nil {
		return err
	}
	if *n.d < 0 {
		return errors.New("it cannot be negative: give a duration such as 90s")
	}
	return nil
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
	if path := configPath(pos); isBattery(path) {
		fmt.Fprintf(stderr, "pitwall: %s is a battery, not a config: give the config whose `battery` names it (`pitwall init` writes one)\n", path)
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

// ledgerFlag is the --db flag of the commands that read the ledger alone.
func ledgerFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("PITWALL_DB")
	if def == "" {
		def = ".pitwall/ledger.db"
	}
	return fs.String("db", def, "ledger path, or a postgres:// URL (a team's shared ledger)")
}

// openLedger opens --db's ledger for reading; a missing file says how to
// make it. A postgres:// URL is the database's to answer for.
func openLedger(path string) (*ledger.Ledger, error) {
	if !isLedgerURL(path) {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no ledger at %s (run a battery first, or pass --db)", path)
		}
	}
	return ledger.OpenReadOnly(path)
}

// isLedgerURL says whether --db names a database by URL (postgres://)
// rather than a file.
func isLedgerURL(db string) bool { return strings.Contains(db, "://") }

// ledgerShown is --db as it may be shown: a URL's password and settings
// masked.
func ledgerShown(db string) string {
	if isLedgerURL(db) {
		return redact.URL(db)
	}
	return db
}

// logFolder is where pitwall.log goes: beside a ledger file, or in
// .pitwall for a ledger in a database.
func logFolder(db string) string {
	if isLedgerURL(db) {
		return ".pitwall"
	}
	return filepath.Dir(db)
}

// oneRun parses the flags of a command that names one run and returns it.
// When ok is false the command returns code.
func oneRun(fs *flag.FlagSet, args []string, cmd string, stderr io.Writer) (id string, code int, ok bool) {
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return "", 0, false
	} else if err != nil {
		return "", state.ExitSetup, false
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "pitwall %s: name one run (an id, a prefix, or \"last\"); `pitwall runs` lists them\n", cmd)
		return "", state.ExitSetup, false
	}
	return pos[0], 0, true
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

// maxWaitOverride is --max-wait as config.Overrides takes it: 0 when not
// given, negative for an explicit 0 (wait for ever).
func (c *commonFlags) maxWaitOverride() time.Duration {
	switch {
	case c.maxWait == nil:
		return 0
	case *c.maxWait == 0:
		return -1
	}
	return *c.maxWait
}
