package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/runner"
	"pitwall/runner/ledger"
	"pitwall/ui"
)

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", "pitwall validate [CONFIG] [flags]",
		"Checks the config and its battery and prints what would run. Nothing is sent to any server.", stderr)
	var cf commonFlags
	cf.register(fs)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return runner.ExitSetup
	}
	cfg, err := config.Load(configPath(pos), cf.overrides(fs), os.Getenv)
	if err != nil {
		return failf(stderr, err)
	}
	repeat := max(cfg.Run.Repeat, 1)
	fmt.Fprintf(stdout, "%s: ok\n", cfg.Path)
	fmt.Fprintf(stdout, "  name     %s\n", cfg.Name)
	fmt.Fprintf(stdout, "  battery  %s (%d tests)\n", cfg.Battery, len(cfg.Tests))
	fmt.Fprintf(stdout, "  models   %s\n", strings.Join(cfg.Models, ", "))
	fmt.Fprintf(stdout, "  cells    %d (%d models × %d tests × %d repeat)\n", len(cfg.Models)*len(cfg.Tests)*repeat, len(cfg.Models), len(cfg.Tests), repeat)
	for _, s := range cfg.Servers {
		where := s.URL
		if s.Kind == "sim" && where == "" {
			where = "simulated, on loopback"
		}
		fmt.Fprintf(stdout, "  server   %s (%s, %d slots) %s\n", s.Name, s.Kind, s.Slots, where)
	}
	fmt.Fprintf(stdout, "  scoring  %s", cfg.Scoring.Mode)
	for _, j := range cfg.Scoring.Judges {
		fmt.Fprintf(stdout, "; %s = %s on %s", j.Name, j.Model, runner.JudgeServer(j))
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "  ledger   %s\n", cfg.DB)
	return 0
}

func cmdSim(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sim", "pitwall sim [CONFIG] [flags]",
		"Serves the config's kind = \"sim\" servers on loopback until interrupted, so curl or any\n"+
			"OpenAI client can talk to them. Give a server a url to fix its port.", stderr)
	var cf commonFlags
	cf.register(fs)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return runner.ExitSetup
	}
	cfg, err := config.Load(configPath(pos), cf.overrides(fs), os.Getenv)
	if err != nil {
		return failf(stderr, err)
	}
	sims, err := runner.StartSims(cfg, false)
	if err != nil {
		return failf(stderr, err)
	}
	if sims == nil {
		return failf(stderr, fmt.Errorf("%s has no kind = \"sim\" server to serve", cfg.Path))
	}
	defer sims.Close()
	for _, s := range cfg.Servers {
		if s.Kind == "sim" {
			fmt.Fprintf(stdout, "%-10s %s  models: %s\n", s.Name, s.URL, strings.Join(s.Models, ", "))
		}
	}
	fmt.Fprintln(stdout, "serving; interrupt (ctrl+c) to stop")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	return 0
}

// ledgerFlag is the --db flag of the commands that read the ledger alone.
func ledgerFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("PITWALL_DB")
	if def == "" {
		def = ".pitwall/ledger.db"
	}
	return fs.String("db", def, "ledger path")
}

func openLedger(path string) (*ledger.Ledger, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no ledger at %s (run a battery first, or pass --db)", path)
	}
	return ledger.OpenReadOnly(path)
}

func cmdRuns(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("runs", "pitwall runs [flags]", "Lists the runs in the ledger, newest first.", stderr)
	db := ledgerFlag(fs)
	limit := fs.Int("n", 20, "how many runs to list")
	if _, err := parseArgs(fs, args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return runner.ExitSetup
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	runs, err := led.Runs(*limit)
	if err != nil {
		return failf(stderr, err)
	}
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "no runs in %s\n", *db)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tSCORING\tCELLS\tSTARTED\tTOOK")
	for _, r := range runs {
		took := "-"
		if !r.EndedAt.IsZero() {
			took = r.EndedAt.Sub(r.StartedAt).Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Name, r.Status, r.ScoringMode,
			len(r.Models)*len(r.Tests)*max(r.Repeat, 1), r.StartedAt.Local().Format("2006-01-02 15:04:05"), took)
	}
	tw.Flush()
	return 0
}

func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("export", "pitwall export RUN [--format json] [-o FILE] [flags]",
		"Prints a run's export. RUN is a run id, a unique prefix of one, or \"last\".", stderr)
	db := ledgerFlag(fs)
	format := fs.String("format", "json", "export format: json")
	out := fs.String("o", "", "write to FILE instead of stdout")
	judgeName := fs.String("judge", "", "whose verdicts to export (default: the run's own judge or jury)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return runner.ExitSetup
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "pitwall export: name one run (an id, a prefix, or \"last\"); `pitwall runs` lists them")
		return runner.ExitSetup
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return failf(stderr, err)
		}
		defer f.Close()
		w = f
	}
	if err := runner.WriteExport(w, led, pos[0], *judgeName, *format); err != nil {
		return failf(stderr, err)
	}
	return 0
}

func cmdShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("show", "pitwall show RUN [--headless] [flags]",
		"Opens a run from the ledger in the grid: browse, open cells, re-judge, switch judges, export.\n"+
			"With --headless, or when stdout is not a terminal, prints its grid and summary instead.\n"+
			"RUN is a run id, a unique prefix of one, or \"last\".", stderr)
	db := ledgerFlag(fs)
	judgeName := fs.String("judge", "", "whose verdicts to show (default: the run's own judge or jury)")
	headless := fs.Bool("headless", false, "print the grid instead of opening it")
	ascii := fs.Bool("ascii", false, "ASCII glyphs")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return runner.ExitSetup
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "pitwall show: name one run (an id, a prefix, or \"last\"); `pitwall runs` lists them")
		return runner.ExitSetup
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	b, err := runner.LoadSnapshot(led, pos[0], *judgeName)
	if err != nil {
		led.Close()
		return failf(stderr, err)
	}
	if *headless || !isTerminal(stdout) {
		led.Close()
		fmt.Fprint(stdout, ui.RenderGrid(b, b.ActiveJudge, *ascii))
		return runner.ExitCode(b, false)
	}
	// Re-judging needs the run's config (the prompts, the judges, the
	// fleet); without it the grid can still be browsed and exported.
	cfgPath, _ := runner.ConfigPath(led, b.ID)
	led.Close()
	opts := ui.Options{ASCII: *ascii || os.Getenv("TERM") == "dumb", NoColor: os.Getenv("NO_COLOR") != "",
		ExitCode: func(b *runner.BatteryRun) int { return runner.ExitCode(b, false) }}
	ctx := context.Background()
	cfg, cerr := config.Load(cfgPath, config.Overrides{DB: *db, Judge: *judgeName}, os.Getenv)
	if cerr == nil {
		e, err := setup(ctx, cfg, b.ID, stderr)
		defer e.close()
		if err == nil {
			run, err := runner.Reopen(cfg, b.ID, runner.Options{Fleet: e.fleet, Ledger: e.led, Logger: e.log})
			if err == nil {
				defer run.Close()
				opts.LogPath, opts.Logger, opts.LedgerPath = e.logPath, e.log, *db
				if _, err := ui.RunTUI(ctx, run.Snapshots(), controller{run}, opts); err != nil {
					return failf(stderr, err)
				}
				return 0
			}
			cerr = err
		} else {
			cerr = err
		}
	}
	b.Message = "browse only: " + cerr.Error()
	snaps := make(chan *runner.BatteryRun, 1)
	snaps <- b
	if _, err := ui.RunTUI(ctx, snaps, browseOnly{db: *db, id: b.ID}, opts); err != nil {
		return failf(stderr, err)
	}
	return 0
}

// browseOnly is the controller of a run whose config cannot be loaded: it
// exports, and does nothing else.
type browseOnly struct{ db, id string }

func (browseOnly) Stop()                            {}
func (browseOnly) Rejudge([]runner.CellRef, string) {}
func (browseOnly) RejudgeAll(string)                {}
func (browseOnly) SwitchJudge(string)               {}
func (b browseOnly) Export() (string, error) {
	led, err := ledger.OpenReadOnly(b.db)
	if err != nil {
		return "", err
	}
	defer led.Close()
	path := filepath.Join(filepath.Dir(b.db), "pitwall-"+b.id+".json")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := runner.WriteExport(f, led, b.id, "", "json"); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

func cmdServers(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("servers", "pitwall servers [CONFIG] [--json]",
		"Probes every server of the fleet: reachable, kind, models offered and resident, slots, GPU readings.", stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return runner.ExitSetup
	}
	cfg, err := config.Load(configPath(pos), cf.overrides(fs), os.Getenv)
	if err != nil {
		return failf(stderr, err)
	}
	sims, err := runner.StartSims(cfg, false)
	if err != nil {
		return failf(stderr, err)
	}
	if sims != nil {
		defer sims.Close()
	}
	servers, err := runner.FleetServers(cfg, os.Getenv)
	if err != nil {
		return failf(stderr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 5 * time.Second}
	results := make([]gpu.ProbeResult, len(servers))
	done := make(chan int)
	for i, s := range servers {
		go func() { results[i] = gpu.Probe(ctx, hc, s); done <- i }()
	}
	for range servers {
		<-done
	}
	tel := gpu.StartTelemetry(ctx, gpu.TelemetryOptions{Interval: 500 * time.Millisecond})
	defer tel.Close()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"servers": results, "telemetry": tel.Source(), "gpus": tel.GPUs()}); err != nil {
			return failf(stderr, err)
		}
	} else {
		printProbes(stdout, results, tel)
	}
	for _, r := range results {
		if r.Reachable {
			return 0
		}
	}
	return runner.ExitSetup
}

func printProbes(w io.Writer, results []gpu.ProbeResult, tel *gpu.Telemetry) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tKIND\tSTATUS\tSLOTS\tRUN/WAIT\tMODELS\tRESIDENT\tGPUS")
	for _, r := range results {
		status := "up " + r.Latency.Round(time.Millisecond).String()
		if !r.Reachable {
			status = "DOWN: " + r.Error
		}
		slots := "-"
		if r.Slots > 0 {
			slots = fmt.Sprint(r.Slots)
		}
		var gpus []string
		for _, g := range r.GPUs {
			gpus = append(gpus, fmt.Sprintf("%s %.0f%% %.1f/%.0fGB", g.Name, g.UtilPct, g.MemUsedMiB/1024, g.MemTotalMiB/1024))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", r.Server, r.Kind, status, slots, r.Running, r.Waiting,
			strings.Join(r.Models, ","), strings.Join(r.Resident, ","), strings.Join(gpus, "; "))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlocal GPU telemetry: %s\n", tel.Source())
	for _, g := range tel.GPUs() {
		fmt.Fprintf(w, "  gpu%d %s  util %.0f%%  vram %.0f/%.0f MiB  %.0f W  %.0f°C\n", g.Index, g.Name, g.UtilPct, g.MemUsedMiB, g.MemTotalMiB, g.PowerW, g.TempC)
	}
}
