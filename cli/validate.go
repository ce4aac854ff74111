package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"pitwall/config"
	"pitwall/runner/setup"
	"pitwall/runner/state"
	"strings"
)

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", "pitwall validate [CONFIG...] [flags]",
		"Checks each config and its battery, asks its servers what models they offer (nothing is run on them), and prints what would run.", stderr)
	var cf commonFlags
	cf.register(fs, "models", "tests", "judge", "judge-samples", "repeat", "db", "strict", "timeout", "time-scale")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return state.ExitSetup
	}
	if len(pos) == 0 {
		pos = []string{configPath(nil)}
	}
	code := 0
	for _, path := range pos {
		if isBattery(path) {
			fmt.Fprintf(stderr, "pitwall: %s is a battery, not a config: validate the config whose `battery` names it\n", path)
			code = state.ExitSetup
			continue
		}
		if config.IsQualifyConfig(path) {
			cfg, tests, err := config.LoadQualify(path, cf.overrides(fs), os.Getenv)
			if err == nil {
				_, err = setup.FleetServers(cfg, os.Getenv)
			}
			if err != nil {
				code = failf(stderr, err)
				continue
			}
			qualifyPlan(stdout, cfg, tests)
			continue
		}
		cfg, err := config.Load(path, cf.overrides(fs), os.Getenv)
		if err != nil {
			code = failf(stderr, err)
			continue
		}
		servers, err := setup.FleetServers(cfg, os.Getenv)
		if err != nil {
			code = failf(stderr, err)
			continue
		}
		printWarnings(stderr, cfg)
		if err := checkServing(cfg, servers, stderr); err != nil {
			code = failf(stderr, err)
			continue
		}
		printPlan(stdout, cfg)
	}
	return code
}

// isBattery says whether a file is a battery rather than a config: a TOML
// file with [[tests]] and no models, or a battery format by its extension.
func isBattery(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", ".jsonl", ".yaml", ".yml":
		return true
	case ".toml":
		// Read as every input is: a FIFO or a device is no battery, and
		// Load says so properly.
		b, err := config.ReadInput(path)
		if err != nil {
			return false
		}
		text := string(b)
		return strings.Contains(text, "[[tests]]") && !strings.Contains(text, "\nmodels") && !strings.HasPrefix(text, "models")
	}
	return false
}

// printPlan says what a valid config would run.
func printPlan(w io.Writer, cfg *config.Config) {
	repeat := max(cfg.Run.Repeat, 1)
	fmt.Fprintf(w, "%s: ok\n", cfg.Path)
	fmt.Fprintf(w, "  name     %s\n", cfg.Name)
	fmt.Fprintf(w, "  battery  %s (%s)\n", cfg.Battery, plural(len(cfg.Tests), "test"))
	fmt.Fprintf(w, "  models   %s\n", strings.Join(cfg.Models, ", "))
	fmt.Fprintf(w, "  cells    %d (%s × %s × %d repeat)\n", len(cfg.Models)*len(cfg.Tests)*repeat,
		plural(len(cfg.Models), "model"), plural(len(cfg.Tests), "test"), repeat)
	for _, s := range cfg.Servers {
		fmt.Fprintf(w, "  server   %s\n", describeServer(s))
	}
	fmt.Fprintf(w, "  scoring  %s", cfg.Scoring.Mode)
	for _, j := range cfg.Scoring.Judges {
		fmt.Fprintf(w, "; %s = %s on %s", j.Name, j.Model, firstNonEmptyStr(j.FleetServer(), "any server that offers it"))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  ledger   %s\n", ledgerShown(cfg.DB))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func firstNonEmptyStr(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
