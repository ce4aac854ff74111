package main

import (
	"bytes"
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
	"pitwall/gpu/telemetry"
	"pitwall/runner"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
	"pitwall/runner/state"
	"pitwall/ui"
)

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", "pitwall validate [CONFIG...] [flags]",
		"Checks each config and its battery and prints what would run. Nothing is sent to any server.", stderr)
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
		cfg, err := config.Load(path, cf.overrides(fs), os.Getenv)
		if err != nil {
			code = failf(stderr, err)
			continue
		}
		if _, err := setup.FleetServers(cfg, os.Getenv); err != nil {
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
		b, err := os.ReadFile(path)
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
		where := s.URL
		if s.Kind == "sim" && where == "" {
			where = "simulated, on loopback"
		}
		fmt.Fprintf(w, "  server   %s (%s, %s) %s\n", s.Name, s.Kind, plural(s.Slots, "slot"), where)
	}
	fmt.Fprintf(w, "  scoring  %s", cfg.Scoring.Mode)
	for _, j := range cfg.Scoring.Judges {
		fmt.Fprintf(w, "; %s = %s on %s", j.Name, j.Model, firstNonEmptyStr(j.FleetServer(), "any server that offers it"))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  ledger   %s\n", cfg.DB)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func cmdSim(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sim", "pitwall sim [CONFIG] [flags]",
		"Serves the config's kind = \"sim\" servers on loopback until interrupted, so curl or any\n"+
			"OpenAI client can talk to them. Give a server a url to fix its port.", stderr)
	var cf commonFlags
	cf.register(fs, "time-scale")
	cfg, code, ok := parseConfig(fs, &cf, args, stderr)
	if !ok {
		return code
	}
	sims, err := setup.StartSims(cfg, false)
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
		return state.ExitSetup
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
	id, code, ok := oneRun(fs, args, "export", stderr)
	if !ok {
		return code
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	defer led.Close()
	// Build it whole before touching -o's file: a bad run id or format
	// must not leave an earlier export emptied.
	var buf bytes.Buffer
	if err := history.WriteExport(&buf, led, id, *judgeName, *format); err != nil {
		return failf(stderr, err)
	}
	if *out == "" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = writeFileAtomic(*out, buf.Bytes())
	}
	if err != nil {
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
	id, code, ok := oneRun(fs, args, "show", stderr)
	if !ok {
		return code
	}
	led, err := openLedger(*db)
	if err != nil {
		return failf(stderr, err)
	}
	b, err := history.LoadSnapshot(led, id, *judgeName)
	if err != nil {
		led.Close()
		return failf(stderr, err)
	}
	if *headless || !isTerminal(stdout) {
		led.Close()
		fmt.Fprint(stdout, ui.RenderGrid(b, b.Plan.InView, *ascii))
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, ui.Summary(b, b.Plan.InView, ui.Options{ASCII: *ascii, LedgerPath: *db,
			ExitCode: func(b *state.BatteryRun) int { return state.ExitCode(b, false) }}))
		return state.ExitCode(b, false)
	}
	// Re-judging needs the run's config (the prompts, the judges, the
	// fleet); without it the grid can still be browsed and exported.
	cfgPath, cerr := history.ConfigPath(led, b.ID)
	led.Close()
	opts := ui.Options{ASCII: *ascii || os.Getenv("TERM") == "dumb", NoColor: os.Getenv("NO_COLOR") != "",
		ExitCode: func(b *state.BatteryRun) int { return state.ExitCode(b, false) }}
	ctx := context.Background()
	var cfg *config.Config
	if cerr == nil {
		cfg, cerr = config.Load(cfgPath, config.Overrides{DB: *db}, os.Getenv)
	}
	if cerr == nil {
		e, err := openEnv(ctx, cfg, b.ID, stderr)
		defer e.close()
		if err == nil {
			run, err := runner.Reopen(cfg, b.ID, runner.Options{Fleet: e.fleet, Ledger: e.led, Logger: e.log})
			if err == nil && *judgeName != "" && *judgeName != b.Plan.InView {
				err = run.SwitchJudge(*judgeName)
			}
			if err == nil {
				defer run.Close()
				opts.LogPath, opts.Logger, opts.LedgerPath = e.logPath, e.log, *db
				last, err := ui.RunTUI(ctx, run.Snapshots(), controller{run}, opts)
				if err != nil {
					return failf(stderr, err)
				}
				return opts.ExitCode(last)
			}
			cerr = err
		} else {
			cerr = err
		}
	}
	b.Message = "browse only: " + cerr.Error()
	snaps := make(chan *state.BatteryRun, 1)
	snaps <- b
	last, err := ui.RunTUI(ctx, snaps, browseOnly{db: *db, id: b.ID}, opts)
	if err != nil {
		return failf(stderr, err)
	}
	return opts.ExitCode(last)
}

// browseOnly is the controller of a run whose config cannot be loaded: it
// exports, and does nothing else.
type browseOnly struct{ db, id string }

func (browseOnly) Stop()                           {}
func (browseOnly) Rejudge([]state.CellRef, string) {}
func (browseOnly) RejudgeAll(string)               {}
func (browseOnly) SwitchJudge(string)              {}
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
	if err := history.WriteExport(f, led, b.id, "", "json"); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

func cmdServers(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("servers", "pitwall servers [CONFIG] [--json]",
		"Probes every server of the fleet: reachable, kind, models offered and resident, slots, GPU readings.", stderr)
	var cf commonFlags
	cf.register(fs, "time-scale")
	asJSON := fs.Bool("json", false, "print JSON")
	cfg, code, ok := parseConfig(fs, &cf, args, stderr)
	if !ok {
		return code
	}
	sims, err := setup.StartSims(cfg, false)
	if err != nil {
		return failf(stderr, err)
	}
	if sims != nil {
		defer sims.Close()
	}
	servers, err := setup.FleetServers(cfg, os.Getenv)
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
	tel := telemetry.Start(ctx, telemetry.Options{Interval: 500 * time.Millisecond})
	defer tel.Close()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(probeJSON(results, tel)); err != nil {
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
	return state.ExitSetup
}

func printProbes(w io.Writer, results []gpu.ProbeResult, tel *telemetry.Watcher) {
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

type gpuJSON struct {
	Index       int     `json:"index"`
	Name        string  `json:"name"`
	UUID        string  `json:"uuid,omitempty"`
	UtilPct     float64 `json:"utilization_pct"`
	MemUsedMiB  float64 `json:"memory_used_mib"`
	MemTotalMiB float64 `json:"memory_total_mib"`
	TempC       float64 `json:"temperature_c"`
	PowerW      float64 `json:"power_w"`
}

type serverJSON struct {
	Server     string    `json:"server"`
	URL        string    `json:"url"`
	Reachable  bool      `json:"reachable"`
	Error      string    `json:"error,omitempty"`
	Kind       string    `json:"kind"`
	Models     []string  `json:"models"`
	Resident   []string  `json:"resident"`
	Slots      int       `json:"slots"`
	Running    int       `json:"running"`
	Waiting    int       `json:"waiting"`
	KVCachePct float64   `json:"kv_cache_pct"`
	LatencyMS  float64   `json:"latency_ms"`
	GPUs       []gpuJSON `json:"gpus"`
}

func gpusJSON(gs []telemetry.GPUState) []gpuJSON {
	out := make([]gpuJSON, 0, len(gs))
	for _, g := range gs {
		out = append(out, gpuJSON{Index: g.Index, Name: g.Name, UUID: g.UUID, UtilPct: g.UtilPct, MemUsedMiB: g.MemUsedMiB,
			MemTotalMiB: g.MemTotalMiB, TempC: g.TempC, PowerW: g.PowerW})
	}
	return out
}

// probeJSON is `servers --json`: snake_case names and units in the names,
// as the export has them.
func probeJSON(results []gpu.ProbeResult, tel *telemetry.Watcher) any {
	servers := make([]serverJSON, 0, len(results))
	for _, r := range results {
		servers = append(servers, serverJSON{Server: r.Server, URL: r.URL, Reachable: r.Reachable, Error: r.Error,
			Kind: string(r.Kind), Models: r.Models, Resident: r.Resident, Slots: r.Slots, Running: r.Running, Waiting: r.Waiting,
			KVCachePct: r.KVCachePct, LatencyMS: float64(r.Latency.Microseconds()) / 1000, GPUs: gpusJSON(r.GPUs)})
	}
	return map[string]any{"servers": servers, "telemetry": tel.Source(), "local_gpus": gpusJSON(tel.GPUs())}
}

func firstNonEmptyStr(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
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

// writeFileAtomic writes data to path through a temporary file beside it,
// so that path holds either its old content or all of the new.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".pitwall-export-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.Chmod(f.Name(), mode); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
